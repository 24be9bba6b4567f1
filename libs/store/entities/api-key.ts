import { EntitySchema } from 'typeorm';
import { column } from '../columns.js';

export interface ApiKeyRow {
  id: string;
  orgId: string;
  keyHash: string;
  name: string;
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
    createdAt: { ...column.timestamp(), name: 'created_at' },
    lastUsedAt: { ...column.timestamp(true), name: 'last_used_at' },
  },
});
