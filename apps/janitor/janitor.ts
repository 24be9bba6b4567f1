import type { Logger } from '../../libs/logging/logger.js';
import type { DedupLedger } from '../../libs/store/dedup-ledger.js';
import type { RateWindows } from '../../libs/store/rate-windows.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { periodicRun } from '../../libs/time/periodic-run.js';
import type { Schedule } from '../../libs/time/schedule.js';
import { deleteExpiredPreviousSigningSecrets } from '../../libs/destinations/previous-signing-secrets.js';
import { deleteExpiredPreviousSecrets } from '../../libs/sources/previous-secrets.js';
import { DAY_MS, purgeStatisticsBefore, sweepRetention, type RetentionPolicy, type SweepCounts } from '../../libs/ledger/retention.js';

export interface JanitorOptions extends RetentionPolicy {
  sql: SqlClient;
  dedup: Pick<DedupLedger, 'purgeExpired'>;
  rateWindows: Pick<RateWindows, 'purgeBefore'>;
  logger: Logger;
  now?: () => number;
  /** Between the end of one run and the start of the next. */
  intervalMs?: number;
  /** Before the first run, so a starting process is not slowed by it. */
  firstRunDelayMs?: number;
  batchSize?: number;
  /** Timers for the first-run delay and the intervals; by default the real clock's, not keeping the process alive. */
  schedule?: Schedule;
}

export interface JanitorRun extends SweepCounts {
  dedupKeysPurged: number;
  rateWindowsPurged: number;
  statsHoursPurged: number;
  /** Sources' and destinations' previous secrets whose grace ended. */
  previousSecretsDeleted: number;
}

/** Rate windows are at most a minute long; older ones can no longer be hit. */
const RATE_WINDOW_KEEP_MS = 120_000;

/**
 * Periodic housekeeping of the store: retention of payloads and events, expired dedup keys, old rate
 * windows, destination statistics older than the events they describe, and the previous secrets of
 * sources and destinations whose grace ended. Runs never overlap; a failed
 * run is logged and the next one tries again.
 */
export function createJanitor(options: JanitorOptions) {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 5 * 60_000;
  const batchSize = options.batchSize ?? 1000;

  async function runOnce(at = now()): Promise<JanitorRun> {
    const swept = await sweepRetention(options.sql, options, { now: at, batchSize, shouldStop: () => runs.stopping() });
    return {
      ...swept,
      dedupKeysPurged: await options.dedup.purgeExpired(at),
      rateWindowsPurged: await options.rateWindows.purgeBefore(at - RATE_WINDOW_KEEP_MS),
      statsHoursPurged: await purgeStatisticsBefore(options.sql, at - options.eventRetentionMs),
      previousSecretsDeleted: (await deleteExpiredPreviousSecrets(options.sql, at)) + (await deleteExpiredPreviousSigningSecrets(options.sql, at)),
    };
  }

  const runs = periodicRun({
    run: () => runOnce().then((run) => options.logger.debug({ run }, 'janitor run')),
    intervalMs,
    onError: (error) => options.logger.error({ err: error }, 'janitor run failed'),
    schedule: options.schedule,
  });

  return {
    runOnce,
    start(): void {
      runs.start(options.firstRunDelayMs ?? 10_000);
    },
    /** Stops scheduling; a run in progress ends after its current batch. */
    stop: () => runs.stop(),
  };
}

export type Janitor = ReturnType<typeof createJanitor>;
