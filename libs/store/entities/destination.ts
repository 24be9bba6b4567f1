import { EntitySchema } from 'typeorm';
import { column } from '../columns.js';
import type { DestinationType } from '../../destinations/queue-target.js';

export type HttpMethod = 'POST' | 'PUT' | 'PATCH';
export type AuthType = 'none' | 'basic' | 'bearer' | 'api_key' | 'custom_header';

/**
 * Why a destination is disabled: by a user (PATCH, create, import), by its own `410 Gone`, or by failing
 * every attempt for `autoDisableAfterSeconds`.
 */
export type DisabledReason = 'manual' | 'gone' | 'failing';

/** `source`: each source's events reach the destination one at a time, in the order received, retries included. */
export type Ordering = 'none' | 'source';

export interface RetryPolicy {
  maxRetries: number;
  initialDelay: number;
  maxDelay: number;
  backoffMultiplier: number;
}

/** A destination as stored: header values, credentials and the relay's signing secret are sealed. */
export interface DestinationRow {
  id: string;
  orgId: string;
  name: string;
  slug: string;
  /** `http` delivers to `url`; the queue types publish to their sealed `target` (`url` is then ''). */
  type: DestinationType;
  url: string;
  /** The queue target as sealed JSON (libs/destinations/queue-target.ts); null for `http`. */
  targetSealed: string | null;
  method: HttpMethod;
  description: string | null;
  /** Plain header values of a row written before they were sealed; `{}` once `headersSealed` is set. */
  headers: Record<string, string>;
  /** The header map, sealed JSON (libs/destinations/destination-headers.ts); null for none or not sealed yet. */
  headersSealed: string | null;
  authType: AuthType;
  authConfigSealed: string | null;
  signingSecretSealed: string;
  /** The secret before the last rotation with a grace period, sealed; deliveries carry its signature too until `previousSigningSecretExpiresAt`. */
  previousSigningSecretSealed?: string | null;
  previousSigningSecretExpiresAt?: number | null;
  timeoutMs: number;
  rateLimitPerMinute: number | null;
  retryPolicy: RetryPolicy;
  ordering: Ordering;
  /** Disabled once every attempt has failed for this long (and at least 5 of them); null: never. */
  autoDisableAfterSeconds: number | null;
  enabled: boolean;
  /** Set while disabled; cleared when enabled again. */
  disabledReason: DisabledReason | null;
  disabledAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export const DestinationEntity = new EntitySchema<DestinationRow>({
  name: 'Destination',
  tableName: 'destinations',
  columns: {
    id: column.id(),
    orgId: { ...column.ref(), name: 'org_id' },
    name: column.varchar(200),
    slug: column.varchar(100),
    type: column.varchar(16),
    url: column.varchar(2048),
    targetSealed: { ...column.text(true), name: 'target_sealed' },
    method: column.varchar(8),
    description: column.text(true),
    headers: column.json(),
    headersSealed: { ...column.text(true), name: 'headers_sealed' },
    authType: { ...column.varchar(16), name: 'auth_type' },
    authConfigSealed: { ...column.text(true), name: 'auth_config_sealed' },
    signingSecretSealed: { ...column.text(), name: 'signing_secret_sealed' },
    previousSigningSecretSealed: { ...column.text(true), name: 'previous_signing_secret_sealed' },
    previousSigningSecretExpiresAt: { ...column.timestamp(true), name: 'previous_signing_secret_expires_at' },
    timeoutMs: { ...column.integer(), name: 'timeout_ms' },
    rateLimitPerMinute: { ...column.integer(true), name: 'rate_limit_per_minute' },
    retryPolicy: { ...column.json(), name: 'retry_policy' },
    ordering: column.varchar(8),
    autoDisableAfterSeconds: { ...column.integer(true), name: 'auto_disable_after_seconds' },
    enabled: column.boolean(),
    disabledReason: { ...column.varchar(16, true), name: 'disabled_reason' },
    disabledAt: { ...column.timestamp(true), name: 'disabled_at' },
    createdAt: { ...column.timestamp(), name: 'created_at' },
    updatedAt: { ...column.timestamp(), name: 'updated_at' },
  },
});
