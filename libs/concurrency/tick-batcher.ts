import { systemSchedule, type Schedule } from '../time/schedule.js';

export interface TickBatcherOptions {
  /** Items per batch (default 256); the rest go in the next batch. */
  maxBatch?: number;
  /**
   * One batch at a time: the calls made while a batch runs wait for it and then go together in the next.
   * For a round trip that the far end answers in order anyway (one request in flight per connection), so
   * waiting costs no time and each batch carries everything asked for during the previous one.
   */
  serial?: boolean;
  /**
   * A batch starts no sooner than this long after the previous one started. A call made when the last
   * batch is older goes at the next turn, as without it; calls made within the interval wait for its end
   * and go together. So sparse calls pay nothing, and a busy caller runs one batch per interval.
   */
  minIntervalMs?: number;
  /** The clock and timers the interval is kept by (the real ones by default; tests pass ManualTimers). */
  now?: () => number;
  schedule?: Schedule;
}

export interface TickBatched<I, O> {
  (item: I): Promise<O>;
  /** Resolves once every call made so far has its answer. */
  drained(): Promise<void>;
}

/**
 * Gathers the calls made within one event-loop turn and runs them as one batch on `setImmediate`
 * (group commit): many concurrent requests then share one database transaction instead of paying for
 * one commit each. `runBatch` answers one result per item, in order; if it throws, every item fails.
 */
export function tickBatcher<I, O>(runBatch: (items: I[]) => Promise<O[]>, options: TickBatcherOptions = {}): TickBatched<I, O> {
  const maxBatch = options.maxBatch ?? 256;
  const { minIntervalMs = 0, now = Date.now, schedule: scheduleAfter = systemSchedule } = options;
  let pending: Array<{ item: I; resolve(value: O): void; reject(error: unknown): void }> = [];
  let scheduled = false;
  let running = 0;
  let lastStart = -Infinity;
  const onDrained: (() => void)[] = [];

  async function flush(): Promise<void> {
    scheduled = false;
    lastStart = now();
    const batch = pending.slice(0, maxBatch);
    pending = pending.slice(batch.length);
    running += 1;
    if (pending.length > 0) schedule();
    try {
      const results = await runBatch(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results[index]!));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
    running -= 1;
    if (pending.length > 0) schedule();
    else if (running === 0) for (const resolve of onDrained.splice(0)) resolve();
  }

  function schedule(): void {
    if (scheduled || (options.serial && running > 0)) return;
    scheduled = true;
    const wait = lastStart + minIntervalMs - now();
    if (wait > 0) scheduleAfter(() => void flush(), wait);
    else setImmediate(() => void flush());
  }

  const batched = (item: I) =>
    new Promise<O>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      schedule();
    });
  batched.drained = () => (pending.length === 0 && running === 0 ? Promise.resolve() : new Promise<void>((resolve) => onDrained.push(resolve)));
  return batched;
}
