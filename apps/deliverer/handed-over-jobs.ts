import type { BrokerRecord } from '../../libs/broker/broker.js';
import type { DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import type { HandedOverAttempts } from '../../libs/store/handed-over-attempts.js';
import type { DelivererLogger } from './destination-batch.js';

/**
 * Marks a copy of a relay.fresh job in its destination's own topic whose attempt was started from
 * relay.fresh; its value is when it was handed over (epoch ms).
 */
export const HANDED_OVER_HEADER = 'relay-handed-over';

/**
 * A handed-over job not started within this is not attempted from relay.fresh (its copy is sent), so a
 * copy read elsewhere knows when its original's outcome is due.
 */
export const HAND_OVER_START_MS = 10_000;

/** For the attempt's record and the mark after it to be written, past the request's own timeout. */
const HAND_OVER_RECORD_MS = 10_000;

/** When a copy not known here and not marked attempted is sent: no original can still be attempted by then. */
export const handOverDeadline = (handedOverAt: number, timeoutMs: number) => handedOverAt + HAND_OVER_START_MS + timeoutMs + HAND_OVER_RECORD_MS;

/** When a record was handed over, if it is a copy. */
export function handedOverAt(record: Pick<BrokerRecord, 'headers'>): number | undefined {
  const value = record.headers[HANDED_OVER_HEADER];
  // Copies made before the header carried a time say '1': long past any deadline.
  return value === undefined ? undefined : Number(value) || 0;
}

/**
 * What became of a copy's original: attempted (the copy is dropped), not attempted (the copy is sent),
 * or not known here (the store's marks, then the deadline, decide).
 */
export type HandOverOutcome = 'attempted' | 'not_attempted' | 'unknown';

export const handOverKey = (job: Pick<DeliveryJob, 'deliveryId' | 'attemptNumber'>) => `${job.deliveryId}:${job.attemptNumber}`;

interface Part {
  keys: readonly string[];
  settledAt?: number;
}

/**
 * relay.fresh's jobs whose attempts run in this process after relay.fresh's offset moved past them
 * (fresh-destinations.ts). Each was first copied to its destination's own topic; the copy asks here
 * before it is sent. Once a part settles, the keys of its attempted jobs are recorded in the store
 * (`marks`), so a copy read by another deliverer, or here after a restart or after its entry was let go
 * (`keepMs` after its part settled), is dropped as well. A mark that could not be written costs a
 * duplicate, never a loss.
 */
export class HandedOverJobs {
  private readonly attempted = new Map<string, Promise<boolean>>();
  private readonly parts: Part[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private readonly recordsByTopic = new Map<string, number>();

  constructor(private readonly options: { now: () => number; keepMs: number; marks: Pick<HandedOverAttempts, 'record' | 'attempted'>; logger: DelivererLogger }) {}

  has(key: string): boolean {
    return this.attempted.has(key);
  }

  /** Records of parts of `topic` still running here. */
  recordsInFlight(topic: string): number {
    return this.recordsByTopic.get(topic) ?? 0;
  }

  /**
   * Takes in a part before its copies are published, so that no copy can ask before it is known here.
   * `run` hands over the part's work, which resolves to how many of its jobs (a prefix, in `keys`' order)
   * were attempted; the rest were stopped (held destination, shutdown) and their copies are sent.
   * `abandon` (the copies could not all be published) forgets the part: none of it was attempted.
   */
  begin(topic: string, keys: readonly string[]): { run(work: Promise<number>): void; abandon(): void } {
    this.letGoOfOld();
    let handOver!: (work: Promise<number>) => void;
    const attempted = new Promise<number>((resolve) => (handOver = resolve)).catch(() => 0);
    const part: Part = { keys };
    keys.forEach((key, index) => this.attempted.set(key, attempted.then((handled) => index < handled)));
    this.parts.push(part);
    this.recordsByTopic.set(topic, this.recordsInFlight(topic) + keys.length);
    const settled = attempted.then(async (handled) => {
      await this.options.marks
        .record(keys.slice(0, handled), this.options.now())
        .catch((error: unknown) => this.options.logger.warn({ topic, err: error }, 'Hand-overs attempted here not recorded; a copy read by another deliverer is sent again'));
      part.settledAt = this.options.now();
      this.running.delete(settled);
      const left = this.recordsInFlight(topic) - keys.length;
      if (left > 0) this.recordsByTopic.set(topic, left);
      else this.recordsByTopic.delete(topic);
    });
    this.running.add(settled);
    return {
      run: handOver,
      abandon: () => {
        for (const key of keys) this.attempted.delete(key);
        handOver(Promise.resolve(0));
      },
    };
  }

  /** Asked once by the copy: its entry goes with the answer. Waits for the original's attempt. */
  async outcome(key: string): Promise<HandOverOutcome> {
    const attempted = this.attempted.get(key);
    if (!attempted) return 'unknown';
    this.attempted.delete(key);
    return (await attempted) ? 'attempted' : 'not_attempted';
  }

  /** Which of the copies' `keys` not known here were marked attempted by a deliverer (one store read). */
  async attemptedElsewhere(keys: readonly string[]): Promise<Set<string>> {
    return this.options.marks.attempted(keys.filter((key) => !this.attempted.has(key)));
  }

  /** Resolves once every part taken in has settled (the deliverer's stop waits for their attempts). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  private letGoOfOld(): void {
    const before = this.options.now() - this.options.keepMs;
    while (this.parts.length > 0 && this.parts[0]!.settledAt !== undefined && this.parts[0]!.settledAt < before) {
      for (const key of this.parts.shift()!.keys) this.attempted.delete(key);
    }
  }
}
