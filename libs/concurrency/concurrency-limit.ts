/** A counting semaphore: at most `size` holders at once, served in arrival order. */
export class ConcurrencyLimit {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('A concurrency limit must be a positive integer');
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

/** One `ConcurrencyLimit` of the same size per key, made on the key's first use. */
export class KeyedConcurrencyLimits<K> {
  private readonly limits = new Map<K, ConcurrencyLimit>();

  constructor(readonly size: number) {}

  acquire(key: K): Promise<() => void> {
    let limit = this.limits.get(key);
    if (!limit) this.limits.set(key, (limit = new ConcurrencyLimit(this.size)));
    return limit.acquire();
  }

  forget(key: K): void {
    this.limits.delete(key);
  }
}
