import { LATENCY_BUCKET_COLUMNS, latencyPercentile } from '../../../libs/stats/latency-buckets.js';
import { HOUR_MS, hourStart } from '../../../libs/stats/stats-hours.js';
import { NotFoundError } from '../../../libs/errors/errors.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import { NO_DELIVERIES, type DestinationStats } from './destination-view.js';

/** DESIGN "Health": statistics cover the attempts of the last 24 hours. */
const WINDOW_MS = 24 * HOUR_MS;

export type HealthStatus = 'healthy' | 'degraded' | 'failing' | 'unknown';

interface WindowTotals {
  attempts: number;
  ok: number;
  latencySum: number;
  maxLatency: number;
  buckets: number[];
}

interface LastActivity {
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
}

const placeholders = (n: number) => new Array(n).fill('?').join(', ');

/** Hourly rows from the hour that contains `now - 24 h`: the window holds at least the last 24 hours. */
async function windowTotals(sql: SqlClient, destinationIds: string[], now: number): Promise<Map<string, WindowTotals>> {
  if (destinationIds.length === 0) return new Map();
  const rows = await sql.all<Record<string, number | string>>(
    `SELECT destination_id, SUM(attempts) AS attempts, SUM(ok_attempts) AS ok, SUM(latency_sum_ms) AS latency_sum,
       MAX(max_latency_ms) AS max_latency, ${LATENCY_BUCKET_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(', ')}
     FROM destination_hourly_stats WHERE destination_id IN (${placeholders(destinationIds.length)}) AND hour_start >= ?
     GROUP BY destination_id`,
    [...destinationIds, hourStart(now - WINDOW_MS)],
  );
  // PostgreSQL sums integers as NUMERIC, which arrives as text.
  return new Map(
    rows.map((row) => [
      String(row.destination_id),
      {
        attempts: Number(row.attempts),
        ok: Number(row.ok),
        latencySum: Number(row.latency_sum),
        maxLatency: Number(row.max_latency),
        buckets: LATENCY_BUCKET_COLUMNS.map((c) => Number(row[c])),
      },
    ]),
  );
}

/** The latest attempt, success and failure, over every hour still kept. */
async function lastActivity(sql: SqlClient, destinationId: string): Promise<LastActivity> {
  const [row] = await sql.all<Record<string, number | null>>(
    `SELECT MAX(last_attempt_at) AS last_attempt_at, MAX(last_success_at) AS last_success_at, MAX(last_failure_at) AS last_failure_at
     FROM destination_hourly_stats WHERE destination_id = ?`,
    [destinationId],
  );
  const instant = (value: number | null | undefined) => (value === null || value === undefined ? null : Number(value));
  return { lastAttemptAt: instant(row?.last_attempt_at), lastSuccessAt: instant(row?.last_success_at), lastFailureAt: instant(row?.last_failure_at) };
}

const percent = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 100;

/** SPEC 2.6: healthy above 95 %, degraded 80 to 95 %, failing below 80 %, unknown without attempts. */
export function healthStatus(successRate: number | null): HealthStatus {
  if (successRate === null) return 'unknown';
  if (successRate > 95) return 'healthy';
  return successRate >= 80 ? 'degraded' : 'failing';
}

function summaryStats(totals: WindowTotals | undefined): DestinationStats {
  if (!totals || totals.attempts === 0) return NO_DELIVERIES;
  return {
    ...NO_DELIVERIES,
    successRate: percent(totals.ok, totals.attempts),
    avgLatency: Math.round(totals.latencySum / totals.attempts),
    deliveriesCount: totals.attempts,
  };
}

/** The statistics of each destination for a list page (no last-activity reads: the summary does not show it). */
export async function destinationStatsByIds(sql: SqlClient, destinationIds: string[], now: number): Promise<Map<string, DestinationStats>> {
  const totals = await windowTotals(sql, destinationIds, now);
  return new Map(destinationIds.map((id) => [id, summaryStats(totals.get(id))]));
}

/** The statistics shown on one destination. */
export async function destinationStats(deps: ApiDeps, destinationId: string): Promise<DestinationStats> {
  const sql = deps.store.sql;
  const [totals, last] = await Promise.all([windowTotals(sql, [destinationId], deps.now()), lastActivity(sql, destinationId)]);
  return { ...summaryStats(totals.get(destinationId)), lastDeliveryAt: last.lastAttemptAt, circuitState: deps.circuitState(destinationId) };
}

/** SPEC 2.6 over the attempts of the last 24 hours; the last timestamps look further back. */
export async function getDestinationHealth(deps: ApiDeps, tenant: Tenant, id: string) {
  const destination = await deps.store.destinations.get(tenant.org.id, id);
  if (!destination) throw new NotFoundError(`Destination ${id} not found`);
  return { ...(await destinationHealth(deps.store.sql, destination.id, deps.now())), circuitState: deps.circuitState(destination.id) };
}

async function destinationHealth(sql: SqlClient, destinationId: string, now: number) {
  const [totalsById, last] = await Promise.all([windowTotals(sql, [destinationId], now), lastActivity(sql, destinationId)]);
  const totals = totalsById.get(destinationId);
  const attempts = totals?.attempts ?? 0;
  const successRate = totals && attempts > 0 ? percent(totals.ok, attempts) : null;
  const percentile = (p: number) => (totals ? latencyPercentile(totals.buckets, p, totals.maxLatency) : null);
  return {
    successRate,
    avgLatency: totals && attempts > 0 ? Math.round(totals.latencySum / attempts) : null,
    p50Latency: percentile(50),
    p95Latency: percentile(95),
    p99Latency: percentile(99),
    totalDeliveries: attempts,
    successfulDeliveries: totals?.ok ?? 0,
    failedDeliveries: attempts - (totals?.ok ?? 0),
    lastDeliveryAt: isoTime(last.lastAttemptAt),
    lastSuccessAt: isoTime(last.lastSuccessAt),
    lastFailureAt: isoTime(last.lastFailureAt),
    status: healthStatus(successRate),
  };
}
