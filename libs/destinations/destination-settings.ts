import type { DestinationRow } from '../store/entities/destination.js';

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
    ordering: row.ordering,
  };
}
