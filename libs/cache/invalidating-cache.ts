export interface InvalidatingCacheOptions<K, V, A extends unknown[]> {
  /** Reads a key's value from the source of truth; `args` are what the key does not say (the asking organization, say). */
  load: (key: K, ...args: A) => Promise<V>;
  /** How long a loaded value is kept; Infinity (the default): until invalidated or evicted. */
  ttlMs?: number;
  /** Entries kept; at the bound the oldest is evicted. Infinity by default. */
  maxEntries?: number;
  now?: () => number;
}

export interface InvalidatingCache<K, V, A extends unknown[]> {
  /** The cached value, or the load already running for the key (started with its first caller's `args`), or a new load. */
  get(key: K, ...args: A): Promise<V>;
  /** Forgets one key, or every key when none is given; a load running for a forgotten key is not kept. */
  invalidate(key?: K): void;
  readonly size: number;
}

/**
 * A cache in front of a store whose changes are announced (`invalidate`), the TTL being the safety net.
 * - Concurrent gets of one key share one load.
 * - A loaded value is kept, null and undefined too: a flood of requests for a missing thing must not
 *   reach the store.
 * - A failed load is not kept (the next get loads again); its rejection reaches every waiter.
 * - A load that an invalidation of its key (or of all) overtook may have missed the change: its result
 *   goes to its waiters but is not kept, and later gets start a new load.
 * - Entries expire `ttlMs` after they were loaded, by the injected clock.
 * - At `maxEntries` the entry kept longest is evicted.
 */
export function createInvalidatingCache<K, V, A extends unknown[] = []>(options: InvalidatingCacheOptions<K, V, A>): InvalidatingCache<K, V, A> {
  const ttlMs = options.ttlMs ?? Infinity;
  const maxEntries = options.maxEntries ?? Infinity;
  const now = options.now ?? Date.now;
  const entries = new Map<K, { value: V; expiresAt: number }>();
  const loads = new Map<K, Promise<V>>();

  function keep(key: K, value: V): void {
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(key, { value, expiresAt: now() + ttlMs });
  }

  function startLoad(key: K, args: A): Promise<V> {
    // The executor turns a load that throws instead of rejecting into a rejection too.
    const load = new Promise<V>((resolve) => resolve(options.load(key, ...args)));
    loads.set(key, load);
    // An invalidation unregisters the load, so only a load still registered settles into the cache.
    const stillCurrent = () => loads.get(key) === load && loads.delete(key);
    // Registered before any waiter's, so a waiter resumes with the cache already settled.
    load.then((value) => stillCurrent() && keep(key, value), stillCurrent);
    return load;
  }

  return {
    async get(key, ...args) {
      const hit = entries.get(key);
      if (hit && hit.expiresAt > now()) return hit.value;
      if (hit) entries.delete(key);
      return loads.get(key) ?? startLoad(key, args);
    },
    invalidate(key) {
      if (key === undefined) {
        entries.clear();
        loads.clear();
      } else {
        entries.delete(key);
        loads.delete(key);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
