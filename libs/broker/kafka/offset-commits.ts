import type { Consumer as KafkaJsConsumer } from 'kafkajs';

export interface PartitionOffset {
  topic: string;
  partition: number;
  /** The next offset the group will read: one past the last handled record. */
  offset: string;
}

/**
 * A member's handled offsets, committed in the background: one OffsetCommit every `intervalMs` at most,
 * carrying the latest handled offset of every partition, instead of one per handled batch (at a few
 * hundred events a second a hop handles about one record per fetch, so that was a commit per record
 * per hop). Only handled offsets are ever added, so at least once holds; what a crash can cost is the
 * records handled in the last interval, delivered again. A stop or a rebalance commits at once (`flush`).
 */
export class OffsetCommits {
  private pending = new Map<string, PartitionOffset>();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: KafkaJsConsumer,
    private readonly intervalMs: number,
    private readonly onFailure: (error: unknown, offsets: PartitionOffset[]) => void,
  ) {}

  add(offset: PartitionOffset): void {
    this.pending.set(`${offset.topic}:${offset.partition}`, offset);
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** Drops what is pending for partitions this member no longer has (a rebalance gave them to another). */
  keepOnly(owned: (topic: string, partition: number) => boolean): void {
    for (const [key, { topic, partition }] of this.pending) if (!owned(topic, partition)) this.pending.delete(key);
  }

  /** Commits what is pending now, after the commit in flight; resolves once it is answered. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.inFlight = this.inFlight.then(async () => {
      if (this.pending.size === 0) return;
      const offsets = [...this.pending.values()];
      this.pending = new Map();
      await this.client.commitOffsets(offsets).catch((error: unknown) => this.onFailure(error, offsets));
    });
    return this.inFlight;
  }
}
