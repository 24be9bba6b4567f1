import { maskSecret } from '../../../libs/secrets/mask-secret.js';
import type { DestinationRow } from '../../../libs/store/entities/destination.js';
import type { ApiDeps } from '../api-deps.js';
import { isoTime } from '../iso-time.js';
import { AUTH_SECRET_FIELDS } from './destination-schema.js';

/** Delivery statistics shown on a destination; a destination with no deliveries yet has none. */
export interface DestinationStats {
  successRate: number | null;
  avgLatency: number | null;
  deliveriesCount: number;
  lastDeliveryAt: number | null;
  circuitState: 'closed' | 'open' | 'half_open';
}

export const NO_DELIVERIES: DestinationStats = {
  successRate: null,
  avgLatency: null,
  deliveriesCount: 0,
  lastDeliveryAt: null,
  circuitState: 'closed',
};

/** The credentials with their secret fields masked (`****` + last 4). */
function maskedAuthConfig(deps: ApiDeps, row: DestinationRow): Record<string, unknown> {
  if (row.authConfigSealed === null) return {};
  const config = JSON.parse(deps.secrets.open(row.authConfigSealed)) as Record<string, string>;
  for (const field of AUTH_SECRET_FIELDS[row.authType]) if (config[field] !== undefined) config[field] = maskSecret(config[field]);
  return config;
}

/** The settable fields but `enabled`, as both the API view and the export entry show them, with `authConfig` as each shows it. */
export function destinationSettings(row: DestinationRow, authConfig: unknown) {
  return {
    name: row.name,
    slug: row.slug,
    url: row.url,
    method: row.method,
    description: row.description,
    headers: row.headers,
    authType: row.authType,
    authConfig,
    timeoutMs: row.timeoutMs,
    rateLimitPerMinute: row.rateLimitPerMinute,
    retryPolicy: row.retryPolicy,
  };
}

export function destinationView(deps: ApiDeps, row: DestinationRow, stats: DestinationStats = NO_DELIVERIES) {
  return {
    id: row.id,
    ...destinationSettings(row, maskedAuthConfig(deps, row)),
    enabled: row.enabled,
    successRate: stats.successRate,
    avgLatency: stats.avgLatency,
    deliveriesCount: stats.deliveriesCount,
    lastDeliveryAt: isoTime(stats.lastDeliveryAt),
    circuitState: stats.circuitState,
    createdAt: isoTime(row.createdAt),
    updatedAt: isoTime(row.updatedAt),
  };
}

/** The list form: id, name, url, enabled, successRate, avgLatency, deliveriesCount (SPEC 2.3). */
export function destinationSummary(row: DestinationRow, stats: DestinationStats = NO_DELIVERIES) {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    enabled: row.enabled,
    successRate: stats.successRate,
    avgLatency: stats.avgLatency,
    deliveriesCount: stats.deliveriesCount,
  };
}
