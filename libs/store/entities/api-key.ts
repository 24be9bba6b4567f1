import { EntitySchema } from 'typeorm';
import { column } from '../columns.js';

/** What a key may do: `admin` everything, `write` everything but key management, `read` only GET. */
export const API_KEY_SCOPES = ['admin', 'write', 'read'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export interface ApiKeyRow {
  id: string;
  orgId: string;
  keyHash: string;
  name: string;
  scope: ApiKeyScope;
  /** The key's first 8 characters, so a listing can tell keys apart; null for keys made before it was kept. */
  prefix: string | null;
  createdAt: number;
  lastUsedAt: number | null;
}

export const ApiKeyEntity = new EntitySchema<ApiKeyRow>({
  name: 'ApiKey',
  tableName: 'api_keys',
  columns: {
    id: column.id(),
    orgId: { ...column.ref(), name: 'org_id' },
    keyHash: { ...column.varchar(64), name: 'key_hash' },
    name: column.varchar(200),
    scope: column.varchar(16),
    prefix: column.varchar(8, true),
    createdAt: { ...column.timestamp(), name: 'created_at' },
    lastUsedAt: { ...column.timestamp(true), name: 'last_used_at' },
  },
});
