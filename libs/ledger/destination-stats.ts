import type { AttemptRecord } from '../pipeline/attempt-record.js';
import { LATENCY_BUCKET_COLUMNS, LATENCY_BUCKET_COUNT, latencyBucket } from '../stats/latency-buckets.js';
import { hourStart } from '../stats/stats-hours.js';
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
