import { z } from 'zod';
import type { AttemptRecord } from '../pipeline/attempt-record.js';
import { LATENCY_BUCKET_COLUMNS, LATENCY_BUCKET_COUNT, latencyBucket } from '../stats/latency-buckets.js';
import { hourStart } from '../stats/stats-hours.js';
import { decodeRows } from '../store/row-schema.js';
import type { SqlClient } from '../store/sql-client.js';

interface HourTally {
  destinationId: string;
  hourStart: number;
  attempts: number;
  ok: number;
  latencySum: number;
  maxLatency: number;
  lastAttemptAt: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  buckets: number[];
}

const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** The later of the stored and the new instant, either of which may be NULL (portable: no GREATEST/MAX(a, b)). */
const laterColumn = (column: string) =>
  `${column} = CASE WHEN excluded.${column} IS NULL THEN destination_hourly_stats.${column}
    WHEN destination_hourly_stats.${column} IS NULL OR excluded.${column} > destination_hourly_stats.${column} THEN excluded.${column}
    ELSE destination_hourly_stats.${column} END`;

const sums = ['attempts', 'ok_attempts', 'latency_sum_ms', ...LATENCY_BUCKET_COLUMNS];
const columns = ['destination_id', 'hour_start', ...sums, 'max_latency_ms', 'last_attempt_at', 'last_success_at', 'last_failure_at'];

const UPSERT = `INSERT INTO destination_hourly_stats (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
  ON CONFLICT (destination_id, hour_start) DO UPDATE SET
  ${sums.map((c) => `${c} = destination_hourly_stats.${c} + excluded.${c}`).join(', ')},
  ${['max_latency_ms', 'last_attempt_at', 'last_success_at', 'last_failure_at'].map(laterColumn).join(',\n  ')}`;

function tally(attempts: AttemptRecord[]): HourTally[] {
  const hours = new Map<string, HourTally>();
  for (const a of attempts) {
    const start = hourStart(a.startedAt);
    const key = `${a.destinationId} ${start}`;
    let hour = hours.get(key);
    if (!hour) {
      hour = {
        destinationId: a.destinationId,
        hourStart: start,
        attempts: 0,
        ok: 0,
        latencySum: 0,
        maxLatency: 0,
        lastAttemptAt: 0,
        lastSuccessAt: null,
        lastFailureAt: null,
        buckets: new Array<number>(LATENCY_BUCKET_COUNT).fill(0),
      };
      hours.set(key, hour);
    }
    const latency = Math.round(a.latencyMs);
    hour.attempts += 1;
    hour.latencySum += latency;
    hour.maxLatency = Math.max(hour.maxLatency, latency);
    hour.buckets[latencyBucket(latency)]! += 1;
    hour.lastAttemptAt = Math.max(hour.lastAttemptAt, a.completedAt);
    if (a.ok) {
      hour.ok += 1;
      hour.lastSuccessAt = later(hour.lastSuccessAt, a.completedAt);
    } else hour.lastFailureAt = later(hour.lastFailureAt, a.completedAt);
  }
  // One order for every writer, so concurrent batches touching the same rows never deadlock.
  return [...hours.values()].sort((x, y) => x.destinationId.localeCompare(y.destinationId) || x.hourStart - y.hourStart);
}

/** Adds newly recorded attempts to their destination's hourly statistics, inside the recorder's transaction. */
export async function addDestinationStats(tx: SqlClient, attempts: AttemptRecord[]): Promise<void> {
  for (const hour of tally(attempts)) {
    await tx.run(UPSERT, [
      hour.destinationId,
      hour.hourStart,
      hour.attempts,
      hour.ok,
      hour.latencySum,
      ...hour.buckets,
      hour.maxLatency,
      hour.lastAttemptAt,
      hour.lastSuccessAt,
      hour.lastFailureAt,
    ]);
  }
}

/** A destination's attempts summed over a window of hours. */
export interface WindowTotals {
  attempts: number;
  ok: number;
  latencySum: number;
  maxLatency: number;
  buckets: number[];
}

// PostgreSQL sums integers as NUMERIC, which arrives as text: every sum is coerced.
const windowRowSchema = z.object({
  destinationId: z.string(),
  attempts: z.coerce.number(),
  ok: z.coerce.number(),
  latencySum: z.coerce.number(),
  maxLatency: z.coerce.number(),
  ...Object.fromEntries(LATENCY_BUCKET_COLUMNS.map((c) => [c, z.coerce.number()])),
});

/** Hourly rows from the hour that contains `since`: the window holds at least everything since then. */
export async function destinationWindowTotals(sql: SqlClient, destinationIds: string[], since: number): Promise<Map<string, WindowTotals>> {
  if (destinationIds.length === 0) return new Map();
  const rows = await sql.all(
    `SELECT destination_id AS "destinationId", SUM(attempts) AS attempts, SUM(ok_attempts) AS ok, SUM(latency_sum_ms) AS "latencySum",
       MAX(max_latency_ms) AS "maxLatency", ${LATENCY_BUCKET_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(', ')}
     FROM destination_hourly_stats WHERE destination_id IN (${destinationIds.map(() => '?').join(', ')}) AND hour_start >= ?
     GROUP BY destination_id`,
    [...destinationIds, hourStart(since)],
  );
  return new Map(
    decodeRows(windowRowSchema, 'destination_hourly_stats', rows).map((row) => [
      row.destinationId,
      {
        attempts: row.attempts,
        ok: row.ok,
        latencySum: row.latencySum,
        maxLatency: row.maxLatency,
        buckets: LATENCY_BUCKET_COLUMNS.map((c) => (row as unknown as Record<string, number>)[c]!),
      },
    ]),
  );
}

export interface LastActivity {
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
}

const lastActivitySchema = z.object({
  lastAttemptAt: z.coerce.number().nullable(),
  lastSuccessAt: z.coerce.number().nullable(),
  lastFailureAt: z.coerce.number().nullable(),
});

/** The latest attempt, success and failure, over every hour still kept. */
export async function destinationLastActivity(sql: SqlClient, destinationId: string): Promise<LastActivity> {
  const rows = await sql.all(
    `SELECT MAX(last_attempt_at) AS "lastAttemptAt", MAX(last_success_at) AS "lastSuccessAt", MAX(last_failure_at) AS "lastFailureAt"
     FROM destination_hourly_stats WHERE destination_id = ?`,
    [destinationId],
  );
  return decodeRows(lastActivitySchema, 'destination_hourly_stats', rows)[0] ?? { lastAttemptAt: null, lastSuccessAt: null, lastFailureAt: null };
}
