import type { Logger } from '../../libs/logging/logger.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { indexAllPending, searchIndexLag } from '../../libs/store/search-index.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { unrefSchedule, type Schedule } from '../../libs/time/schedule.js';

export interface SearchIndexerOptions {
  sql: SqlClient;
  lag: RelayMetrics['searchIndexLag'];
  logger: Pick<Logger, 'warn'>;
  /** Between the end of one pass and the start of the next, when the last one caught up. */
  intervalMs?: number;
  /** How long one pass indexes before it publishes the lag; a pass cut short is followed at once by the next. */
  passBudgetMs?: number;
  now?: () => number;
  /** Times the passes and the rest after each batch (unref'd timers by default); tests pass one that records it. */
  schedule?: Schedule;
}

/**
 * Indexes the payloads of stored events for search, behind the router's insert: each pass indexes what
 * was stored since the last one, in small batches with a rest after each, for at most its budget, then
 * publishes how many events remain unindexed. Passes never overlap; a failed pass is logged and the next one tries again.
 */
export function createSearchIndexer(options: SearchIndexerOptions) {
  const intervalMs = options.intervalMs ?? 500;
  const passBudgetMs = options.passBudgetMs ?? 1000;
  const now = options.now ?? Date.now;
  const schedule = options.schedule ?? unrefSchedule;
  let cancelPass: (() => void) | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;

  /** One pass: indexes until caught up or out of budget, then publishes the lag (so a backlog shows while it lasts). */
  async function runOnce(): Promise<{ indexed: number; lag: number; cutShort: boolean }> {
    const deadline = now() + passBudgetMs;
    let cutShort = false;
    let batchStarted = 0;
    const indexed = await indexAllPending(options.sql, {
      // As long as the batch took: on SQLite it held the file's one write lock, which the router's and
      // recorder's transactions (another thread's connection) then find free at least half the time, and
      // on a thread of its own the indexer takes at most about half a core from the threads that route,
      // deliver and take webhooks. Behind, it lags (the metric shows it); it never holds them up.
      afterBatch: () => new Promise<void>((resolve) => void schedule(resolve, now() - batchStarted)),
      shouldStop: () => {
        if (stopped) return true;
        batchStarted = now();
        return (cutShort = batchStarted >= deadline);
      },
    });
    const lag = await searchIndexLag(options.sql);
    options.lag.set(lag);
    return { indexed, lag, cutShort };
  }

  function schedulePass(delayMs: number): void {
    if (stopped) return;
    cancelPass = schedule(() => {
      running = runOnce()
        .then((pass) => (pass.cutShort ? 0 : intervalMs))
        .catch((error: unknown) => {
          options.logger.warn({ err: error }, 'search indexing pass failed; the next pass retries');
          return intervalMs;
        })
        .then((next) => {
          running = undefined;
          schedulePass(next);
        });
    }, delayMs);
  }

  return {
    runOnce,
    start: () => schedulePass(intervalMs),
    /** Stops scheduling and waits for a pass in progress; what it left is indexed after the next start. */
    async stop(): Promise<void> {
      stopped = true;
      cancelPass?.();
      await running;
    },
  };
}

export type SearchIndexer = ReturnType<typeof createSearchIndexer>;
