import type { BatchOutcome, BrokerLogger, BrokerRecord, RecordBatch } from '../broker.js';
import { backoffDelay, type BackoffOptions } from '../../time/backoff.js';
import type { GroupCommit } from './group-commit.js';
import type { LogStore, StoredTopic } from './log-store.js';
import type { ConcurrencyLimit } from '../../concurrency/concurrency-limit.js';
import { WakeSignal } from './wake-signal.js';
import { CommitOrder } from '../commit-order.js';

/** A consumer as its group sees it. */
export interface GroupMember {
  /** Its place in the group's deal (`ConsumerOptions.rank`). */
  readonly rank?: number;
  readonly fromBeginning: boolean;
  readonly maxBatchSize: number;
  /** Bounds how many of this member's partitions are handled at once. */
  readonly slots: ConcurrencyLimit;
  subscription(): readonly StoredTopic[];
  isPaused(topic: string, partition: number): boolean;
  handle(batch: RecordBatch): Promise<void | BatchOutcome>;
}

export interface WorkerContext {
  groupId: string;
  store: LogStore;
  commits: GroupCommit;
  logger: BrokerLogger;
  errorBackoff: BackoffOptions;
  maxBatchBytes: number;
}

type DeliveryResult = 'progress' | 'stalled' | 'failed';

/**
 * Delivers one partition to whichever member of the group owns it, one batch at a time, committing after
 * each (after its work is complete, when the handler leaves some running: `CommitOrder`). Living in the
 * group rather than in a member means a partition handed over in a rebalance is never handled twice at
 * once: the new owner gets the next batch only after the previous one finished, and its position is kept.
 */
export class PartitionWorker {
  private owner: GroupMember | null = null;
  private position: number | undefined;
  private running = false;
  private current: { owner: GroupMember; done: Promise<unknown> } | null = null;
  private readonly signal = new WakeSignal();
  private readonly order: CommitOrder;
  /** Counts rewinds, so that a batch handled across one neither commits nor moves the position past it. */
  private rewinds = 0;

  constructor(
    private readonly context: WorkerContext,
    readonly topic: StoredTopic,
    readonly partition: number,
  ) {
    const { groupId, logger } = context;
    this.order = new CommitOrder({
      commit: (_topic, _partition, next) => this.commitInBackground(Number(next)),
      rewind: (_topic, _partition, from, error) => {
        logger.warn({ groupId, topic: topic.name, partition, offset: from, err: error }, 'Work on handled records failed; the partition is read again from the first of them');
        this.position = Number(from);
        this.rewinds += 1;
        this.signal.notify();
      },
    });
  }

  get assignee(): GroupMember | null {
    return this.owner;
  }

  assign(owner: GroupMember | null): void {
    if (owner === this.owner) return;
    this.owner = owner;
    this.signal.notify();
    if (owner && !this.running) {
      this.running = true;
      void this.run();
    }
  }

  /** New records or a resume: look again. */
  wake(): void {
    this.signal.notify();
  }

  /**
   * Settles once the batch `member` is handling on this partition (if any) has finished and committed,
   * and the work handled batches left running is complete.
   */
  idle(member: GroupMember): Promise<unknown> {
    return Promise.all([this.current?.owner === member ? this.current.done : undefined, this.order.settled()]);
  }

  private async run(): Promise<void> {
    let failures = 0;
    try {
      while (this.owner) {
        const owner = this.owner;
        this.position ??= this.startPosition(owner);
        if (!this.deliverable(owner)) {
          await this.signal.wait();
          continue;
        }
        const release = await owner.slots.acquire();
        let result: DeliveryResult;
        try {
          if (this.owner !== owner || !this.deliverable(owner)) continue;
          const done = this.deliver(owner, this.position, release);
          this.current = { owner, done };
          result = await done;
        } finally {
          this.current = null;
          release();
        }
        if (result === 'progress') {
          failures = 0;
          continue;
        }
        failures += 1;
        await this.sleepWhileOwnedBy(owner, backoffDelay(this.context.errorBackoff, failures));
      }
    } finally {
      // Same synchronous step as the last `while` check: a later `assign` sees running === false.
      this.running = false;
    }
  }

  private deliverable(owner: GroupMember): boolean {
    return !owner.isPaused(this.topic.name, this.partition) && this.position! < this.topic.ends[this.partition]!;
  }

  private startPosition(owner: GroupMember): number {
    const committed = this.context.store.committed(this.context.groupId, this.topic, this.partition);
    if (committed !== undefined) return committed;
    return owner.fromBeginning ? 0 : this.topic.ends[this.partition]!;
  }

  /** Reads a batch, hands it to the owner and commits; the slot is given back as soon as the handler is done. */
  private async deliver(owner: GroupMember, position: number, releaseSlot: () => void): Promise<DeliveryResult> {
    const { store, commits, groupId, logger, maxBatchBytes } = this.context;
    const where = { groupId, topic: this.topic.name, partition: this.partition, offset: position };
    try {
      const records = store.read(this.topic, this.partition, position, owner.maxBatchSize, maxBatchBytes);
      if (records.length === 0) {
        // Retention removed what a group without commits pointed at; continue after the gap.
        this.position = this.topic.ends[this.partition];
        return 'progress';
      }
      let handled: number;
      let completion: Promise<void> | undefined;
      const rewinds = this.rewinds;
      const progress = this.progressCommits(records, rewinds);
      try {
        const outcome = await owner.handle({ topic: this.topic.name, partition: this.partition, records, progress: progress.report });
        handled = outcome ? Math.max(progress.reported(), Math.min(records.length, Math.floor(outcome.handled))) : records.length;
        completion = outcome?.completion;
      } catch (error) {
        if (progress.reported() > 0 && this.rewinds === rewinds) this.position = nextAfter(records, progress.reported());
        logger.warn({ ...where, err: error }, 'Batch handler failed; the batch will be delivered again after a back-off');
        return 'failed';
      } finally {
        progress.end();
        releaseSlot();
      }
      if (this.rewinds !== rewinds) return 'progress';
      if (handled > 0) {
        const next = nextAfter(records, handled);
        // Behind work still going on, the commit waits for it; else it is made here.
        if (completion || this.order.handedOn(this.topic.name, this.partition) !== undefined) {
          this.order.handled(this.topic.name, this.partition, records[Math.min(progress.reported(), handled - 1)]!.offset, String(next), completion);
        } else await commits.commit({ groupId, topic: this.topic, partition: this.partition, offset: next });
        this.position = next;
      }
      return handled > 0 || owner.isPaused(this.topic.name, this.partition) ? 'progress' : 'stalled';
    } catch (error) {
      logger.error({ ...where, err: error }, 'Embedded log read or commit failed; retrying after a back-off');
      return 'failed';
    }
  }

  /**
   * `RecordBatch.progress` of one batch: each longer prefix reported is committed at once (group commit
   * folds a turn's commits into one write), unless earlier work is still going on or was rewound, whose
   * commit must come first. `reported` is the prefix committed so. A report after the handler has ended
   * (`end`) is ignored: the batch's own commit, made then, may already be past it.
   */
  private progressCommits(records: BrokerRecord[], rewinds: number) {
    let reported = 0;
    let ended = false;
    return {
      report: (handled: number) => {
        if (ended || handled <= reported || handled > records.length || this.rewinds !== rewinds || this.order.handedOn(this.topic.name, this.partition) !== undefined) return;
        reported = handled;
        void this.commitInBackground(nextAfter(records, handled));
      },
      reported: () => reported,
      end: () => void (ended = true),
    };
  }

  /** A commit nothing waits for: a failed one is logged, and the next one covers it. */
  private commitInBackground(offset: number): Promise<unknown> {
    const { commits, groupId, logger } = this.context;
    return commits.commit({ groupId, topic: this.topic, partition: this.partition, offset }).catch((error: unknown) =>
      logger.error({ groupId, topic: this.topic.name, partition: this.partition, err: error }, 'Embedded log commit failed; the next commit covers it'),
    );
  }

  /** Backs off before a retry, cut short when the partition changes hands (the new owner retries at once). */
  private async sleepWhileOwnedBy(owner: GroupMember, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.owner === owner && Date.now() < deadline) await this.signal.wait(deadline - Date.now());
  }
}

/** The offset a partition is read on from once the first `handled` records are done. */
const nextAfter = (records: readonly BrokerRecord[], handled: number): number => Number(records[handled - 1]!.offset) + 1;
