import { ConflictError, NotFoundError } from '../errors/errors.js';
import { z } from 'zod';
import { API_KEY_SCOPES, type ApiKeyRow, type ApiKeyScope } from '../store/entities/api-key.js';
import type { PageQuery } from '../store/org-scoped-repository.js';
import type { Store } from '../store/store.js';
import type { Tenant } from '../tenancy/tenant.js';
import { isoTime } from '../time/iso-time.js';

export const createKeyBody = z.strictObject({
  name: z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters'),
  scope: z.enum(API_KEY_SCOPES, { error: `must be one of ${API_KEY_SCOPES.join(', ')}` }),
});

/** What key management needs: the store only, so the CLI calls the same functions. */
export interface KeyDeps {
  store: Store;
}

export function keyView(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    prefix: row.prefix,
    createdAt: isoTime(row.createdAt),
    lastUsedAt: isoTime(row.lastUsedAt),
  };
}

export async function listKeys(deps: KeyDeps, tenant: Tenant, page: PageQuery) {
  const result = await deps.store.apiKeys.list(tenant.org.id, page);
  return { rows: result.rows.map(keyView), total: result.total };
}

/** The calling key itself (any scope may ask): how a client such as the console learns what it may do. */
export async function currentKey(deps: KeyDeps, tenant: Tenant, keyId: string) {
  const row = await deps.store.apiKeys.get(tenant.org.id, keyId);
  // Revoked while this request was under way.
  if (!row) throw new NotFoundError(`API key ${keyId} not found`);
  return keyView(row);
}

/** A new key; its plaintext is in this answer only (only its SHA-256 is stored). */
export async function createKey(deps: KeyDeps, tenant: Tenant, input: { name: string; scope: ApiKeyScope }) {
  const { row, key } = await deps.store.apiKeys.create(tenant.org.id, input.name, input.scope);
  return { ...keyView(row), key };
}

/** Deletes a key; the organization's last admin key stays, or nobody could manage keys any more. */
export async function revokeKey(deps: KeyDeps, tenant: Tenant, id: string): Promise<void> {
  const outcome = await deps.store.apiKeys.revoke(tenant.org.id, id);
  if (outcome === 'not_found') throw new NotFoundError(`API key ${id} not found`);
  if (outcome === 'last_admin') throw new ConflictError('LAST_ADMIN_KEY', `API key ${id} is the organization's last admin key; create another admin key before revoking it`);
}
