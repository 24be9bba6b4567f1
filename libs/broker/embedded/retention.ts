import { setImmediate as nextTick } from 'node:timers/promises';
import type { BrokerLogger } from '../broker.js';
import type { LogStore, StoredTopic } from './log-store.js';

export interface RetentionOptions {
  /** Consumed records older than this are deleted. */
  maxAgeMs: number;
  /** When the file's live data exceeds this, consumed records are deleted regardless of age, oldest first. */
  maxBytes: number;
  /** Offsets of a group that has not committed for this long (and has no member here) are forgotten, as Kafka does. */
  groupExpiryMs: number;
  /** How often retention runs. */
  intervalMs: number;
}

export const DEFAULT_RETENTION: RetentionOptions = {
  maxAgeMs: 60 * 60 * 1000,
  maxBytes: 1024 ** 3,
  groupExpiryMs: 7 * 24 * 60 * 60 * 1000,
  intervalMs: 30_000,
};

/** Records deleted per transaction, so a large backlog never blocks the event loop for long. */
const CHUNK = 2_000;

interface ConsumedRange {
  topic: StoredTopic;
  partition: number;
  low: number;
  /** Lowest committed offset of all groups: everything below has been consumed by every group. */
  committed: number;
}

/**
 * Deletes consumed records: below the lowest committed offset of every group that commits on a partition,
 * when older than `maxAgeMs` or while the file is over `maxBytes`. Records no group has consumed stay.
 * Groups that stopped committing long ago (e.g. one-off groups of past processes) stop holding records back.
 */
export class Retention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly store: LogStore,
    private readonly options: RetentionOptions,
    private readonly logger: BrokerLogger,
    private readonly activeGroups: () => string[],
    /** The clock record ages and group commit times are judged by: the log store's, `Date.now`. */
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.run().catch((error: unknown) => this.logger.error({ err: error }, 'Embedded log retention failed'));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** One pass; resolves with the number of records deleted. */
  run(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<number> {
    this.store.expireGroups(this.now() - this.options.groupExpiryMs, this.activeGroups());
    const ranges = this.consumedRanges();
    const cutoff = this.now() - this.options.maxAgeMs;
    let deleted = 0;
    for (const range of ranges) {
      deleted += await this.deleteBelow(range, this.firstNewerThan(range, cutoff), () => true);
    }
    const overSize = () => this.store.usedBytes() > this.options.maxBytes;
    for (const range of ranges) {
      if (!overSize()) break;
      deleted += await this.deleteBelow(range, range.committed, overSize);
    }
    return deleted;
  }

  private consumedRanges(): ConsumedRange[] {
    const ranges: ConsumedRange[] = [];
    for (const { topic, partition, offset } of this.store.minCommitted()) {
      const low = this.store.lowOffset(topic, partition);
      if (low !== undefined && low < offset) ranges.push({ topic, partition, low, committed: offset });
    }
    return ranges;
  }

  /** Binary search for the first consumed offset whose record is not older than `cutoff` (timestamps grow with offsets). */
  private firstNewerThan({ topic, partition, low, committed }: ConsumedRange, cutoff: number): number {
    let from = low;
    let to = committed;
    while (from < to) {
      const middle = Math.floor((from + to) / 2);
      const timestamp = this.store.timestampFrom(topic, partition, middle);
      if (timestamp === undefined || timestamp >= cutoff) to = middle;
      else from = middle + 1;
    }
    return from;
  }

  /** Deletes [range.low, end) chunk by chunk while `more()` holds; moves range.low along. */
  private async deleteBelow(range: ConsumedRange, end: number, more: () => boolean): Promise<number> {
    let deleted = 0;
    while (range.low < end && !this.stopped && more()) {
      const to = Math.min(end, range.low + CHUNK);
      deleted += this.store.deleteRange(range.topic, range.partition, range.low, to);
      range.low = to;
      await nextTick();
    }
    return deleted;
  }
}
