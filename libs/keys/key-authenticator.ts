import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRepository } from '../store/api-key-repository.js';
import type { ApiKeyScope } from '../store/entities/api-key.js';
import type { OrganizationRepository } from '../store/store.js';
import type { Tenant } from '../tenancy/tenant.js';

/** Who is calling: a key, its organization and what it may do. */
export interface ApiPrincipal extends Tenant {
  keyId: string;
  scope: ApiKeyScope;
}

export interface KeyAuthenticatorOptions {
  keys: Pick<ApiKeyRepository, 'byHash' | 'touch'>;
  organizations: Pick<OrganizationRepository, 'byId'>;
  now?: () => number;
  /**
   * A cached key is read again after this long. Revocations are announced and drop the key at once; this
   * only bounds how long a missed announcement (a key deleted with the CLI) keeps a key working.
   */
  ttlMs?: number;
  /** `lastUsedAt` is written at most once per key in this interval. */
  lastUsedIntervalMs?: number;
  /** A failed `lastUsedAt` write is reported here; it never fails the request. */
  onTouchError?: (error: unknown) => void;
}

export interface KeyAuthenticator {
  /** The key's principal, or null for a key that does not exist (or no longer does). */
  authenticate(key: string): Promise<ApiPrincipal | null>;
  /** Drops a revoked key from the cache (every key for `*`), so its next request is checked in the store. */
  forget(keyId: string): void;
}

interface CachedKey {
  digest: Buffer;
  principal: ApiPrincipal;
  loadedAt: number;
  touchedAt: number;
}

/**
 * Checks API keys against an in-memory copy of the known ones, so a request costs one SHA-256 and no
 * store round trip. Entries are found by the first 8 bytes of the digest and confirmed by a
 * constant-time comparison of the whole digest: the time taken says nothing about how close a guess is.
 */
export function createKeyAuthenticator(options: KeyAuthenticatorOptions): KeyAuthenticator {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? 30_000;
  const lastUsedIntervalMs = options.lastUsedIntervalMs ?? 60_000;
  const onTouchError = options.onTouchError ?? (() => undefined);
  const cache = new Map<string, CachedKey>();
  // Bumped by every revocation: a lookup that started before one must not cache what it read.
  let generation = 0;

  async function load(digest: Buffer, slot: string, at: number): Promise<CachedKey | undefined> {
    const started = generation;
    const row = await options.keys.byHash(digest.toString('hex'));
    const org = row ? await options.organizations.byId(row.orgId) : null;
    if (!row || !org) {
      // A cached key found gone on its re-read leaves the cache too.
      const stale = cache.get(slot);
      if (stale && timingSafeEqual(stale.digest, digest)) cache.delete(slot);
      return undefined;
    }
    const entry: CachedKey = {
      digest,
      principal: { keyId: row.id, org, scope: row.scope },
      loadedAt: at,
      touchedAt: row.lastUsedAt ?? -Infinity,
    };
    if (started === generation) cache.set(slot, entry);
    return entry;
  }

  return {
    async authenticate(key) {
      // The one-shot hash: about half the cost of createHash().update().digest() for a short key.
      const digest = hash('sha256', key, 'buffer');
      const slot = digest.toString('hex', 0, 8);
      const at = now();
      let entry = cache.get(slot);
      if (!entry || at - entry.loadedAt >= ttlMs || !timingSafeEqual(entry.digest, digest)) entry = await load(digest, slot, at);
      if (!entry) return null;
      if (at - entry.touchedAt >= lastUsedIntervalMs) {
        entry.touchedAt = at;
        await options.keys.touch(entry.principal.keyId, at, lastUsedIntervalMs).catch(onTouchError);
      }
      return entry.principal;
    },
    forget(keyId) {
      generation += 1;
      for (const [slot, entry] of cache) if (keyId === '*' || entry.principal.keyId === keyId) cache.delete(slot);
    },
  };
}
