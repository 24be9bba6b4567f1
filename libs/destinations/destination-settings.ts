import type { DestinationRow } from '../store/entities/destination.js';

/** The settable fields but `enabled`, as both the API view and the export entry show them, with the secrets as each shows them. */
export function destinationSettings(row: DestinationRow, secrets: { headers: Record<string, string>; authConfig: unknown }) {
  return {
    name: row.name,
    slug: row.slug,
    url: row.url,
    method: row.method,
    description: row.description,
    headers: secrets.headers,
    authType: row.authType,
    authConfig: secrets.authConfig,
    timeoutMs: row.timeoutMs,
    rateLimitPerMinute: row.rateLimitPerMinute,
    retryPolicy: row.retryPolicy,
    ordering: row.ordering,
    autoDisableAfterSeconds: row.autoDisableAfterSeconds,
  };
}
