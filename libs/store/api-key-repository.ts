import { createHash, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { newId } from '../ids/ids.js';
import { ApiKeyEntity, type ApiKeyRow, type ApiKeyScope } from './entities/api-key.js';
import { OrgScopedRepository } from './org-scoped-repository.js';
import type { SqlClient } from './sql-client.js';

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** How many leading characters of a key are kept in the clear, to tell keys apart in a listing. */
export const KEY_PREFIX_LENGTH = 8;

export type RevokeOutcome = 'revoked' | 'not_found' | 'last_admin';

/** What `ensure` found: the key registered now, already there, or revoked (and so not registered again). */
export type EnsureOutcome = { status: 'created' | 'exists' } | { status: 'revoked'; keyId: string; revokedAt: number };

/** API keys of organizations; only a key's SHA-256 is stored, never the key. */
export class ApiKeyRepository extends OrgScopedRepository<ApiKeyRow> {
  constructor(
    dataSource: DataSource,
    private readonly sql: SqlClient,
  ) {
    super(dataSource, ApiKeyEntity);
  }

  /** Creates a key (or registers one chosen by the operator) and returns its row and plaintext. */
  async create(orgId: string, name: string, scope: ApiKeyScope, key = `rk_${randomBytes(24).toString('base64url')}`): Promise<{ row: ApiKeyRow; key: string }> {
    const row: ApiKeyRow = {
      id: newId('key'),
      orgId,
      keyHash: hashApiKey(key),
      name,
      scope,
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      createdAt: Date.now(),
      lastUsedAt: null,
    };
    await this.repo.insert(row);
    return { row, key };
  }

  /** Registers an operator's key (bootstrap) as `admin`; idempotent on the key itself, and never a revoked key. */
  async ensure(orgId: string, name: string, key: string): Promise<EnsureOutcome> {
    const keyHash = hashApiKey(key);
    const [revoked] = await this.sql.all<{ key_id: string; revoked_at: string | number }>('SELECT key_id, revoked_at FROM revoked_api_keys WHERE key_hash = ?', [keyHash]);
    if (revoked) return { status: 'revoked', keyId: revoked.key_id, revokedAt: Number(revoked.revoked_at) };
    if (await this.byHash(keyHash)) return { status: 'exists' };
    await this.create(orgId, name, 'admin', key);
    return { status: 'created' };
  }

  count(): Promise<number> {
    return this.repo.count();
  }

  /** Any organization's key with this SHA-256 (hex). */
  byHash(keyHash: string): Promise<ApiKeyRow | null> {
    return this.repo.findOneBy({ keyHash });
  }

  /**
   * Deletes a key unless it is the organization's last `admin` key, and records its SHA-256 as revoked in
   * the same transaction, so nothing can register that key again. The organization's keys are locked
   * for the check (its row on PostgreSQL; SQLite's write transaction excludes every other writer), so two
   * concurrent revocations cannot remove the last two admin keys together.
   */
  revoke(orgId: string, id: string, now = Date.now()): Promise<RevokeOutcome> {
    return this.sql.transaction(async (tx) => {
      if (tx.kind === 'postgres') await tx.all('SELECT id FROM organizations WHERE id = ? FOR UPDATE', [orgId]);
      const [key] = await tx.all<{ scope: string }>('SELECT scope FROM api_keys WHERE org_id = ? AND id = ?', [orgId, id]);
      if (!key) return 'not_found';
      if (key.scope === 'admin') {
        const [admins] = await tx.all<{ n: number }>("SELECT COUNT(*) AS n FROM api_keys WHERE org_id = ? AND scope = 'admin'", [orgId]);
        if (Number(admins!.n) <= 1) return 'last_admin';
      }
      await tx.run('INSERT INTO revoked_api_keys (key_hash, org_id, key_id, name, revoked_at) SELECT key_hash, org_id, id, name, ? FROM api_keys WHERE id = ?', [now, id]);
      await tx.run('DELETE FROM api_keys WHERE id = ?', [id]);
      return 'revoked';
    });
  }

  /**
   * Records a use at `now` unless one was recorded within `intervalMs`: the condition is in the statement,
   * so processes sharing the store write a key's row at most once per interval between them.
   */
  async touch(id: string, now: number, intervalMs: number): Promise<void> {
    await this.sql.run('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)', [now, id, now - intervalMs]);
  }
}
