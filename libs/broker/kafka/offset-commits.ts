import type { Consumer as KafkaJsConsumer } from 'kafkajs';
import { toBrokerError } from './kafka-errors.js';

export interface PartitionOffset {
  topic: string;
  partition: number;
  /** The next offset the group will read: one past the last handled record. */
  offset: string;
}

export interface OffsetCommitsOptions {
  /** At most one OffsetCommit in this time. */
  intervalMs: number;
  /** Told of a commit given up on (not retriable, or still failing after the retries). */
  onFailure: (error: unknown, offsets: PartitionOffset[]) => void;
  /** Tries of a commit whose failure is retriable as the adapter classifies kafkajs errors (a coordinator moving, a rebalance starting). */
  attempts?: number;
  /** Uncommitted progress carried over from the member's previous kafkajs consumer (one that crashed). */
  progress?: PartitionOffset[];
}

/**
 * A member's handled offsets, committed in the background: one OffsetCommit every `intervalMs` at most,
 * carrying the latest handled offset of every partition, instead of one per handled batch (at a few
 * hundred events a second a hop handles about one record per fetch, so that was a commit per record
 * per hop). Only handled offsets are ever added, so at least once holds; what a crash can cost is the
 * records handled in the last interval, delivered again. A stop or a rebalance commits at once (`flush`).
 * A retriable failure is tried again, one interval later, for the partitions still owned (a commit for a
 * partition another member now reads could move its offset back). What is given up on (kafkajs refuses
 * commits while it restarts a crashed consumer) is kept as this member's uncommitted progress: the next
 * group join that leaves the partition here seeks past it (`uncommitted`) and commits it, so a broker's
 * death does not hand the records handled since the last commit out again.
 */
export class OffsetCommits {
  private pending = new Map<string, PartitionOffset>();
  /** The latest handled offset of each partition not known to be committed. */
  private handled = new Map<string, PartitionOffset>();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  /** The member's partitions as of its last group join; a stop keeps them until it has committed. */
  private owns: (topic: string, partition: number) => boolean = () => true;

  constructor(
    private readonly client: Pick<KafkaJsConsumer, 'commitOffsets'>,
    private readonly options: OffsetCommitsOptions,
  ) {
    for (const offset of options.progress ?? []) this.handled.set(`${offset.topic}:${offset.partition}`, offset);
  }

  /** What was handled and is not known to be committed, for a consumer started in this one's place. */
  progress(): PartitionOffset[] {
    return [...this.handled.values()];
  }

  add(offset: PartitionOffset): void {
    const key = `${offset.topic}:${offset.partition}`;
    this.pending.set(key, offset);
    this.handled.set(key, offset);
    this.timer ??= setTimeout(() => void this.flush(), this.options.intervalMs);
  }

  /**
   * A group join: drops what is pending (or being tried again), and the uncommitted progress, of
   * partitions a rebalance gave to another member; the progress left is committed on the new generation.
   */
  assigned(owns: (topic: string, partition: number) => boolean): void {
    this.owns = owns;
    for (const [key, { topic, partition }] of this.pending) if (!owns(topic, partition)) this.pending.delete(key);
    for (const [key, offset] of this.handled) {
      if (!owns(offset.topic, offset.partition)) this.handled.delete(key);
      else if (!this.pending.has(key)) this.add(offset);
    }
  }

  /** Where this member's handled records of the partition end, when that was not committed: the join reads on from there. */
  uncommitted(topic: string, partition: number): string | undefined {
    return this.handled.get(`${topic}:${partition}`)?.offset;
  }

  /** Commits what is pending now, after the commit in flight; resolves once it is answered or given up on. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.inFlight = this.inFlight.then(async () => {
      if (this.pending.size === 0) return;
      let offsets = [...this.pending.values()];
      this.pending = new Map();
      const attempts = this.options.attempts ?? 3;
      for (let attempt = 1; offsets.length > 0; attempt += 1) {
        try {
          await this.client.commitOffsets(offsets);
          this.committed(offsets);
          return;
        } catch (error) {
          if (attempt >= attempts || !toBrokerError(error, 'Kafka offset commit').retriable) {
            this.options.onFailure(error, offsets);
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, this.options.intervalMs));
          offsets = offsets.filter(({ topic, partition }) => this.owns(topic, partition));
        }
      }
    });
    return this.inFlight;
  }

  /** Progress committed is no longer this member's alone to remember (a later add may have moved it on). */
  private committed(offsets: PartitionOffset[]): void {
    for (const offset of offsets) {
      const key = `${offset.topic}:${offset.partition}`;
      if (this.handled.get(key) === offset) this.handled.delete(key);
    }
  }
}
