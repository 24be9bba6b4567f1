/** Where a partition's committed offset may move, as one adapter's consumer sees it. */
export interface CommitOrderHooks {
  /** Every record of the partition below `next` is handled and complete; a promise returned is waited for by `settled`. */
  commit(topic: string, partition: number, next: string): void | Promise<unknown>;
  /** A completion failed: the partition is to be read again from `from` (the first record of that batch). */
  rewind(topic: string, partition: number, from: string, error: unknown): void;
}

interface HandledBatch {
  first: string;
  next: string;
  complete: boolean;
}

/**
 * Keeps each partition's commits below the first handled batch whose work is not complete yet
 * (`BatchOutcome.completion`), while later batches are handled and completed around it: a partition's
 * offset moves past answered work only, and a crash reads the unanswered again. Batches without a
 * completion are complete when handled.
 */
export class CommitOrder {
  private readonly partitions = new Map<string, HandledBatch[]>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly hooks: CommitOrderHooks) {}

  /** The records from `first` up to (not including) `next` were handled; `completion` is their remaining work. */
  handled(topic: string, partition: number, first: string, next: string, completion?: Promise<void>): void {
    const key = `${topic}:${partition}`;
    const queue = this.partitions.get(key) ?? [];
    const batch: HandledBatch = { first, next, complete: completion === undefined };
    queue.push(batch);
    this.partitions.set(key, queue);
    if (!completion) {
      void this.advance(topic, partition);
      return;
    }
    const settled = completion.then(
      () => {
        batch.complete = true;
        return this.advance(topic, partition);
      },
      (error: unknown) => {
        const current = this.partitions.get(key);
        const at = current?.indexOf(batch) ?? -1;
        // Gone already: dropped in a rebalance, or behind an earlier batch that rewound.
        if (at === -1) return;
        current!.splice(at);
        this.hooks.rewind(topic, partition, first, error);
      },
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
  }

  /** Where the partition is read on from, past batches handled here and not complete yet (a rejoin seeks there). */
  handedOn(topic: string, partition: number): string | undefined {
    return this.partitions.get(`${topic}:${partition}`)?.at(-1)?.next;
  }

  /** A rebalance: the batches of partitions this member no longer owns are another member's to read again. */
  keepOnly(owns: (topic: string, partition: number) => boolean): void {
    for (const [key, queue] of this.partitions) {
      const [topic, partition] = splitKey(key);
      if (queue.length === 0 || !owns(topic, partition)) this.partitions.delete(key);
    }
  }

  /** Resolves once every completion given so far has settled and its commit was made (a stop waits for it before its last commit). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  private advance(topic: string, partition: number): void | Promise<unknown> {
    const queue = this.partitions.get(`${topic}:${partition}`);
    let next: string | undefined;
    while (queue && queue.length > 0 && queue[0]!.complete) next = queue.shift()!.next;
    if (next !== undefined) return this.hooks.commit(topic, partition, next);
  }
}

function splitKey(key: string): [string, number] {
  const at = key.lastIndexOf(':');
  return [key.slice(0, at), Number(key.slice(at + 1))];
}
