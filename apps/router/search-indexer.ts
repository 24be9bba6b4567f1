import type { Logger } from '../../libs/logging/logger.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { indexAllPending, searchIndexLag } from '../../libs/store/search-index.js';
import type { SqlClient } from '../../libs/store/sql-client.js';

export interface SearchIndexerOptions {
  sql: SqlClient;
  lag: RelayMetrics['searchIndexLag'];
  logger: Pick<Logger, 'warn'>;
  /** Between the end of one pass and the start of the next, when the last one caught up. */
  intervalMs?: number;
  /** How long one pass indexes before it publishes the lag; a pass cut short is followed at once by the next. */
  passBudgetMs?: number;
  now?: () => number;
}

/** A macrotask turn between batches: ingest requests and router batches waiting on the loop go first. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Indexes the payloads of stored events for search, behind the router's insert: each pass indexes what
 * was stored since the last one, in small batches, for at most its budget, then publishes how many
 * events remain unindexed. Passes never overlap; a failed pass is logged and the next one tries again.
 */
export function createSearchIndexer(options: SearchIndexerOptions) {
  const intervalMs = options.intervalMs ?? 500;
  const passBudgetMs = options.passBudgetMs ?? 1000;
  const now = options.now ?? Date.now;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;

  /** One pass: indexes until caught up or out of budget, then publishes the lag (so a backlog shows while it lasts). */
  async function runOnce(): Promise<{ indexed: number; lag: number; cutShort: boolean }> {
    const deadline = now() + passBudgetMs;
    let cutShort = false;
    const indexed = await indexAllPending(options.sql, {
      afterBatch: yieldToLoop,
      shouldStop: () => stopped || (cutShort = now() >= deadline),
    });
    const lag = await searchIndexLag(options.sql);
    options.lag.set(lag);
    return { indexed, lag, cutShort };
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .then((pass) => (pass.cutShort ? 0 : intervalMs))
        .catch((error: unknown) => {
          options.logger.warn({ err: error }, 'search indexing pass failed; the next pass retries');
          return intervalMs;
        })
        .then((next) => {
          running = undefined;
          schedule(next);
        });
    }, delayMs);
    timer.unref();
  }

  return {
    runOnce,
    start: () => schedule(intervalMs),
    /** Stops scheduling and waits for a pass in progress; what it left is indexed after the next start. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type SearchIndexer = ReturnType<typeof createSearchIndexer>;
