/**
 * Gathers the calls made within one event-loop turn and runs them as one batch on `setImmediate`
 * (group commit): many concurrent requests then share one database transaction instead of paying for
 * one commit each. `runBatch` answers one result per item, in order; if it throws, every item fails.
 */
export function tickBatcher<I, O>(runBatch: (items: I[]) => Promise<O[]>, maxBatch = 256): (item: I) => Promise<O> {
  let pending: Array<{ item: I; resolve(value: O): void; reject(error: unknown): void }> = [];
  let scheduled = false;

  async function flush(): Promise<void> {
    scheduled = false;
    const batch = pending.slice(0, maxBatch);
    pending = pending.slice(batch.length);
    if (pending.length > 0) schedule();
    try {
      const results = await runBatch(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results[index]!));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void flush());
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      schedule();
    });
}
