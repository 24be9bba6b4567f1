import { createInvalidatingCache } from '../../libs/cache/invalidating-cache.js';
import type { DeliveryLookup } from '../../libs/delivery/delivery-lookup.js';

export interface CachedLookupOptions {
  /** Safety net only: changes announced on relay.config invalidate at once (`invalidate`). */
  ttlMs?: number;
  /** Source slugs kept; slugs never change, so entries only leave to bound memory. */
  maxSourceEntries?: number;
  now?: () => number;
}

export interface CachedLookup extends DeliveryLookup {
  /** Forgets one destination, or every destination when no id is given. */
  invalidate(destinationId?: string): void;
}

/**
 * The lookup behind caches keyed by id, so a backlog of jobs costs one store read per destination and
 * per source. A missing destination is cached too: a deleted destination's backlog must not hit the
 * store per job. A load runs with the organization of the job that asked first.
 */
export function createCachedLookup(inner: DeliveryLookup, options: CachedLookupOptions = {}): CachedLookup {
  const destinations = createInvalidatingCache({
    load: (destinationId: string, orgId: string) => inner.destination(orgId, destinationId),
    ttlMs: options.ttlMs ?? 60_000,
    now: options.now,
  });
  const slugs = createInvalidatingCache({
    load: (sourceId: string, orgId: string) => inner.sourceSlug(orgId, sourceId),
    maxEntries: options.maxSourceEntries ?? 10_000,
  });

  return {
    async destination(orgId, destinationId) {
      const target = await destinations.get(destinationId, orgId);
      // Ids are unique across organizations; a job naming another organization does not get this one.
      return target && target.orgId === orgId ? target : null;
    },
    sourceSlug: (orgId, sourceId) => slugs.get(sourceId, orgId),
    invalidate: (destinationId) => destinations.invalidate(destinationId),
  };
}
