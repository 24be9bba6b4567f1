import { EntitySchema } from 'typeorm';
import { column } from '../columns.js';

export type Provider = 'codehost' | 'payments' | 'commerce' | 'chat' | 'telecom' | 'custom' | 'generic';
export type IpFilterMode = 'none' | 'allowlist' | 'denylist';
export type DedupStrategy = 'auto' | 'provider_id' | 'payload_hash' | 'idempotency_key' | 'none';

/** A source as stored: the verification secret is sealed (encrypted) and kept apart from its settings. */
export interface SourceRow {
  id: string;
  orgId: string;
  name: string;
  slug: string;
  description: string | null;
  provider: Provider | null;
  /** verificationConfig without its secret, e.g. `{type: 'hmac', algorithm, header, encoding, prefix}`. */
  verification: Record<string, unknown>;
  secretSealed: string | null;
  /** The secret before the last rotation with a grace period, sealed; signatures made with it verify until `previousSecretExpiresAt`. */
  previousSecretSealed?: string | null;
  previousSecretExpiresAt?: number | null;
  rejectInvalidSignatures: boolean;
  rateLimitPerMinute: number | null;
  ipFilterMode: IpFilterMode;
  ipAllowlist: string[];
  ipDenylist: string[];
  encryptFields: string[];
  maskFields: string[];
  dedupEnabled: boolean;
  dedupStrategy: DedupStrategy;
  dedupWindowHours: number;
  dedupCustomHeader: string | null;
  enabled: boolean;
  lastEventAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export const SourceEntity = new EntitySchema<SourceRow>({
  name: 'Source',
  tableName: 'sources',
  columns: {
    id: column.id(),
    orgId: { ...column.ref(), name: 'org_id' },
    name: column.varchar(200),
    slug: column.varchar(100),
    description: column.text(true),
    provider: column.varchar(16, true),
    verification: column.json(),
    secretSealed: { ...column.text(true), name: 'secret_sealed' },
    previousSecretSealed: { ...column.text(true), name: 'previous_secret_sealed' },
    previousSecretExpiresAt: { ...column.timestamp(true), name: 'previous_secret_expires_at' },
    rejectInvalidSignatures: { ...column.boolean(), name: 'reject_invalid_signatures' },
    rateLimitPerMinute: { ...column.integer(true), name: 'rate_limit_per_minute' },
    ipFilterMode: { ...column.varchar(16), name: 'ip_filter_mode' },
    ipAllowlist: { ...column.json(), name: 'ip_allowlist' },
    ipDenylist: { ...column.json(), name: 'ip_denylist' },
    encryptFields: { ...column.json(), name: 'encrypt_fields' },
    maskFields: { ...column.json(), name: 'mask_fields' },
    dedupEnabled: { ...column.boolean(), name: 'dedup_enabled' },
    dedupStrategy: { ...column.varchar(20), name: 'dedup_strategy' },
    dedupWindowHours: { ...column.integer(), name: 'dedup_window_hours' },
    dedupCustomHeader: { ...column.varchar(200, true), name: 'dedup_custom_header' },
    enabled: column.boolean(),
    lastEventAt: { ...column.timestamp(true), name: 'last_event_at' },
    createdAt: { ...column.timestamp(), name: 'created_at' },
    updatedAt: { ...column.timestamp(), name: 'updated_at' },
  },
});
