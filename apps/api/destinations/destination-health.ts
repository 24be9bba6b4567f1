import { destinationLastActivity, destinationWindowTotals, type WindowTotals } from '../../../libs/ledger/destination-stats.js';
import { latencyPercentile } from '../../../libs/stats/latency-buckets.js';
import { HOUR_MS } from '../../../libs/stats/stats-hours.js';
import { NotFoundError } from '../../../libs/errors/errors.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import { NO_DELIVERIES, type DestinationStats } from './destination-view.js';

/** DESIGN "Health": statistics cover the attempts of the last 24 hours. */
const WINDOW_MS = 24 * HOUR_MS;

export type HealthStatus = 'healthy' | 'degraded' | 'failing' | 'unknown';

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
  const totals = await destinationWindowTotals(sql, destinationIds, now - WINDOW_MS);
  return new Map(destinationIds.map((id) => [id, summaryStats(totals.get(id))]));
}

/** The statistics shown on one destination. */
export async function destinationStats(deps: ApiDeps, destinationId: string): Promise<DestinationStats> {
  const sql = deps.store.sql;
  const [totals, last] = await Promise.all([destinationWindowTotals(sql, [destinationId], deps.now() - WINDOW_MS), destinationLastActivity(sql, destinationId)]);
  return { ...summaryStats(totals.get(destinationId)), lastDeliveryAt: last.lastAttemptAt, circuitState: deps.circuitState(destinationId) };
}

/** SPEC 2.6 over the attempts of the last 24 hours; the last timestamps look further back. */
export async function getDestinationHealth(deps: ApiDeps, tenant: Tenant, id: string) {
  const destination = await deps.store.destinations.get(tenant.org.id, id);
  if (!destination) throw new NotFoundError(`Destination ${id} not found`);
  return { ...(await destinationHealth(deps.store.sql, destination.id, deps.now())), circuitState: deps.circuitState(destination.id) };
}

async function destinationHealth(sql: SqlClient, destinationId: string, now: number) {
  const [totalsById, last] = await Promise.all([destinationWindowTotals(sql, [destinationId], now - WINDOW_MS), destinationLastActivity(sql, destinationId)]);
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
