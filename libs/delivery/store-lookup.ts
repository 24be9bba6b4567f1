import type { DestinationAuth } from './build-request.js';
import { openHeaders } from '../destinations/destination-headers.js';
import { openQueueTarget } from '../destinations/queue-target-seal.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { DestinationRow } from '../store/entities/destination.js';
import type { SourceRow } from '../store/entities/source.js';
import type { DeliveryLookup, DeliveryTarget } from './delivery-lookup.js';

/** The store reads the lookup needs; `store.destinations` and `store.sources` fit. */
export interface DeliveryRows {
  destinations: { get(orgId: string, id: string): Promise<DestinationRow | null> };
  sources: { get(orgId: string, id: string): Promise<SourceRow | null> };
}

const text = (value: unknown): value is string => typeof value === 'string';

/**
 * The auth header settings from the opened `authConfig`. Missing credentials (a destination imported
 * with redacted `authConfig`, then enabled) deliver without an auth header rather than holding or
 * failing jobs in silence: the destination's 401s are recorded as attempts, where the owner sees them.
 */
function deliveryAuth(row: DestinationRow, config: Record<string, unknown>): DestinationAuth {
  switch (row.authType) {
    case 'basic':
      if (text(config.username) && text(config.password)) return { authType: 'basic', authConfig: { username: config.username, password: config.password } };
      break;
    case 'bearer':
      if (text(config.token)) return { authType: 'bearer', authConfig: { token: config.token } };
      break;
    case 'api_key':
      if (text(config.headerName) && text(config.key)) return { authType: 'api_key', authConfig: { headerName: config.headerName, key: config.key } };
      break;
    case 'custom_header':
      if (text(config.headerName) && text(config.headerValue)) {
        return { authType: 'custom_header', authConfig: { headerName: config.headerName, headerValue: config.headerValue } };
      }
      break;
    case 'none':
      break;
  }
  return { authType: 'none' };
}

/** Opens the sealed header values, credentials and signing secret; a DecryptionError (wrong key) propagates. */
function deliveryTargetOf(row: DestinationRow, secrets: SecretBox): DeliveryTarget {
  const config = row.authConfigSealed === null ? {} : (JSON.parse(secrets.open(row.authConfigSealed)) as Record<string, unknown>);
  return {
    id: row.id,
    orgId: row.orgId,
    enabled: row.enabled,
    destination: {
      ...deliveryAuth(row, config ?? {}),
      url: row.url,
      method: row.method,
      headers: openHeaders(secrets, row),
      signingSecret: secrets.open(row.signingSecretSealed),
      ...(row.previousSigningSecretSealed && row.previousSigningSecretExpiresAt !== null && row.previousSigningSecretExpiresAt !== undefined
        ? { previousSigningSecret: { secret: secrets.open(row.previousSigningSecretSealed), expiresAt: row.previousSigningSecretExpiresAt } }
        : {}),
    },
    queue: openQueueTarget(row, secrets),
    timeoutMs: row.timeoutMs,
    rateLimitPerMinute: row.rateLimitPerMinute,
    retryPolicy: row.retryPolicy,
    ordering: row.ordering,
  };
}

export function createStoreDeliveryLookup(rows: DeliveryRows, secrets: SecretBox): DeliveryLookup {
  return {
    async destination(orgId, destinationId) {
      const row = await rows.destinations.get(orgId, destinationId);
      return row ? deliveryTargetOf(row, secrets) : null;
    },
    async sourceSlug(orgId, sourceId) {
      return (await rows.sources.get(orgId, sourceId))?.slug ?? null;
    },
  };
}
