import type { DestinationRow } from '../store/entities/destination.js';

/** The settable fields but `enabled`, as both the API view and the export entry show them, with the secrets as each shows them. */
export function destinationSettings(row: DestinationRow, secrets: { headers: Record<string, string>; authConfig: unknown; target: Record<string, unknown> | null }) {
  return {
    name: row.name,
    slug: row.slug,
    type: row.type,
    // `url` for http, `target` for the queue types: each is absent where it does not apply.
    ...(row.type === 'http' ? { url: row.url } : { target: secrets.target ?? {} }),
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
