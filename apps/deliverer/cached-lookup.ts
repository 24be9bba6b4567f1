import type { DeliveryLookup, DeliveryTarget } from '../../libs/delivery/delivery-lookup.js';

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

interface Entry<T> {
  value: Promise<T>;
  expiresAt: number;
}

/**
 * The lookup behind a cache keyed by id, so a backlog of jobs costs one store read per destination.
 * Concurrent reads of one id share a load; a missing destination is cached too (a deleted destination's
 * backlog must not hit the store per job); a failed load is not cached.
 */
export function createCachedLookup(inner: DeliveryLookup, options: CachedLookupOptions = {}): CachedLookup {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxSourceEntries = options.maxSourceEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const destinations = new Map<string, Entry<DeliveryTarget | null>>();
  const slugs = new Map<string, Promise<string | null>>();
  let generation = 0;

  async function destination(orgId: string, destinationId: string): Promise<DeliveryTarget | null> {
    let entry = destinations.get(destinationId);
    if (!entry || entry.expiresAt <= now()) {
      const loadedIn = generation;
      const value = inner.destination(orgId, destinationId);
      entry = { value, expiresAt: now() + ttlMs };
      destinations.set(destinationId, entry);
      const stored = entry;
      // A change announced while the load ran may not be in its result: such a result is used once, not kept.
      value.then(
        () => loadedIn !== generation && destinations.get(destinationId) === stored && destinations.delete(destinationId),
        () => destinations.get(destinationId) === stored && destinations.delete(destinationId),
      );
    }
    const target = await entry.value;
    // Ids are unique across organizations; a job naming another organization does not get this one.
    return target && target.orgId === orgId ? target : null;
  }

  async function sourceSlug(orgId: string, sourceId: string): Promise<string | null> {
    let slug = slugs.get(sourceId);
    if (!slug) {
      if (slugs.size >= maxSourceEntries) slugs.delete(slugs.keys().next().value!);
      slug = inner.sourceSlug(orgId, sourceId);
      slugs.set(sourceId, slug);
      const stored = slug;
      slug.catch(() => slugs.get(sourceId) === stored && slugs.delete(sourceId));
    }
    return slug;
  }

  return {
    destination,
    sourceSlug,
    invalidate(destinationId) {
      generation += 1;
      if (destinationId === undefined) destinations.clear();
      else destinations.delete(destinationId);
    },
  };
}
