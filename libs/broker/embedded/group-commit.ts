import { StorageFullError } from '../../errors/errors.js';
import { isStorageFull } from '../../storage/storage-full.js';
import { BrokerUnavailableError } from '../errors.js';
import type { AppendedPartitions, LogStore, PendingAppend, PendingCommit } from './log-store.js';

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: every append and offset commit requested within one tick goes into one transaction,
 * written on `setImmediate`. Each caller's promise settles once that transaction has committed (or failed).
 */
export class GroupCommit {
  private appends: PendingAppend[] = [];
  private commits: PendingCommit[] = [];
  private waiters: Waiter[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private held = false;

  constructor(
    private readonly store: LogStore,
    private readonly onAppended: (partitions: AppendedPartitions) => void,
  ) {}

  append(records: PendingAppend[]): Promise<void> {
    for (const record of records) this.appends.push(record);
    return this.enqueue();
  }

  commit(commit: PendingCommit): Promise<void> {
    this.commits.push(commit);
    return this.enqueue();
  }

  /** Stops writing (requests keep queueing) until `release`; lets the checkpointer finish a pass. */
  hold(): void {
    this.held = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
  }

  release(): void {
    this.held = false;
    if (this.waiters.length > 0) this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Writes everything pending in one transaction (scheduled per tick; called directly on close). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    if (this.waiters.length === 0) return;
    const appends = this.appends;
    const commits = this.commits;
    const waiters = this.waiters;
    this.appends = [];
    this.commits = [];
    this.waiters = [];
    let appended: AppendedPartitions;
    try {
      appended = this.store.write(appends, commits);
    } catch (error) {
      // The transaction rolled back (and LogStore.write its offsets): the next flush starts clean.
      const failure = isStorageFull(error)
        ? new StorageFullError(error)
        : new BrokerUnavailableError(`The embedded log could not write: ${(error as Error).message}`, error);
      for (const waiter of waiters) waiter.reject(failure);
      return;
    }
    for (const waiter of waiters) waiter.resolve();
    if (appended.size > 0) this.onAppended(appended);
  }

  private enqueue(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.held) this.scheduled ??= setImmediate(() => this.flush());
    return done;
  }
}
