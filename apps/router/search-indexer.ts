import { machineBusyMeter } from '../../libs/concurrency/machine-busy.js';
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
  /** How busy the machine's cores were since the reading before, 0 to 1 (machineBusyMeter's); tests pass their own. */
  machineBusy?: () => number;
  /** A pass starting with the machine at least this busy indexes nothing, unless `maxDeferredLag` events wait. */
  deferWhenBusy?: number;
  /** How far behind the index may fall while it gives way: a search reads these events' texts one by one. */
  maxDeferredLag?: number;
  /** Times the passes and the rest after each batch (unref'd timers by default); tests pass one that records it. */
  schedule?: Schedule;
}

/** What one pass did: `deferred` when it gave way to a busy machine and indexed nothing. */
export interface IndexingPass {
  indexed: number;
  lag: number;
  cutShort: boolean;
  deferred: boolean;
}

/**
 * Indexes the payloads of stored events for search, behind the router's insert: each pass indexes what
 * was stored since the last one, in small batches with a rest after each, for at most its budget, then
 * publishes how many events remain unindexed. Passes never overlap; a failed pass is logged and the next one tries again.
 *
 * Indexing is the one work of the relay that can wait: the `200`s and the deliveries are promises, and a
 * search finds what the index does not hold yet by reading it (search-index.ts). So a pass that starts while
 * the machine's cores are busy (85% by default, whoever's the work) indexes nothing and only publishes the
 * lag, until the machine has cores to spare or the lag reaches `maxDeferredLag` (100,000 events by default,
 * about 0.1 s more a search on a fast day). Past the cap it indexes at its usual pace again: the work is put
 * off, not dropped, and a load the machine cannot carry with its index still shows, as deliveries falling
 * behind (docs/decisions/0049-search-indexer-thread-and-yield.md).
 */
export function createSearchIndexer(options: SearchIndexerOptions) {
  const intervalMs = options.intervalMs ?? 500;
  const passBudgetMs = options.passBudgetMs ?? 1000;
  const now = options.now ?? Date.now;
  const schedule = options.schedule ?? unrefSchedule;
  const machineBusy = options.machineBusy ?? machineBusyMeter();
  const deferWhenBusy = options.deferWhenBusy ?? 0.85;
  const maxDeferredLag = options.maxDeferredLag ?? 100_000;
  let cancelPass: (() => void) | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;

  /** One pass: indexes until caught up or out of budget, then publishes the lag (so a backlog shows while it lasts). */
  async function runOnce(): Promise<IndexingPass> {
    if (machineBusy() >= deferWhenBusy) {
      const lag = await searchIndexLag(options.sql);
      if (lag < maxDeferredLag) {
        options.lag.set(lag);
        return { indexed: 0, lag, cutShort: false, deferred: true };
      }
    }
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
    return { indexed, lag, cutShort, deferred: false };
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
