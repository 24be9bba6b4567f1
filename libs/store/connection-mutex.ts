import type { WriterControl } from '../sqlite/wal-checkpointer.js';

/** Serializes work on one SQLite connection: a transaction must not interleave with other statements on it. */
export function createMutex() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const result = tail.then(work, work);
    tail = result.catch(() => undefined);
    return result;
  };
}

export type Mutex = ReturnType<typeof createMutex>;

/**
 * Holds the connection for the checkpointer's last short pass. The hold queues behind the work already
 * started (a pass it overlaps with simply does not finish, and is tried again later), and statements
 * asked for meanwhile wait behind it. A release that comes first cancels it; one hold is queued at most.
 */
export function mutexHold(exclusive: Mutex): WriterControl {
  let wanted = false;
  let queued = false;
  let letGo: (() => void) | null = null;
  return {
    hold() {
      wanted = true;
      if (queued) return;
      queued = true;
      void exclusive(async () => {
        if (wanted) await new Promise<void>((resolve) => (letGo = resolve));
        queued = false;
      });
    },
    release() {
      wanted = false;
      letGo?.();
      letGo = null;
    },
  };
}
