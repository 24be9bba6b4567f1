/** A counting semaphore: at most `size` holders at once, served in arrival order. */
export class ConcurrencyLimit {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('A concurrency limit must be a positive integer');
  }

  /** Nobody holds a place or waits for one: the limit is as new. */
  get idle(): boolean {
    return this.held === 0 && this.waiting.length === 0;
  }

  /** Resolves with the function that gives the place back (calling it twice gives back once). */
  async acquire(): Promise<() => void> {
    if (this.held < this.size) this.held += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The place passes straight to the next waiter, so `held` stays as it is.
      if (next) next();
      else this.held -= 1;
    };
  }
}

/**
 * One `ConcurrencyLimit` of the same size per key, made on the key's first use and dropped when its last
 * place is given back with nobody waiting: an idle limit is as new, so only keys in use take memory
 * (a deliverer may send to 100,000 destinations, few of them at any one time).
 */
export class KeyedConcurrencyLimits<K> {
  private readonly limits = new Map<K, ConcurrencyLimit>();

  constructor(readonly size: number) {}

  async acquire(key: K): Promise<() => void> {
    let limit = this.limits.get(key);
    if (!limit) this.limits.set(key, (limit = new ConcurrencyLimit(this.size)));
    const release = await limit.acquire();
    return () => {
      release();
      if (limit.idle && this.limits.get(key) === limit) this.limits.delete(key);
    };
  }

  /** Keys with a place held or awaited. */
  get activeKeys(): number {
    return this.limits.size;
  }
}
