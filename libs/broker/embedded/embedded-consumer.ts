import type { BatchOutcome, Consumer, ConsumerOptions, RecordBatch, TopicPartitions } from '../broker.js';
import { PauseState } from '../pause-state.js';
import type { ConsumerGroup } from './consumer-group.js';
import type { StoredTopic } from './log-store.js';
import type { GroupMember } from './partition-worker.js';
import { ConcurrencyLimit } from '../../concurrency/concurrency-limit.js';

/** What a consumer needs from the embedded broker that created it. */
export interface ConsumerHost {
  topic(name: string): StoredTopic | undefined;
  topics(): StoredTopic[];
  ensureTopic(name: string): StoredTopic;
  /** Adds the member to its group (creating the group) and returns the group. */
  join(member: EmbeddedConsumer): ConsumerGroup;
  forget(member: EmbeddedConsumer): void;
}

export class EmbeddedConsumer implements Consumer, GroupMember {
  readonly fromBeginning: boolean;
  readonly maxBatchSize: number;
  readonly slots: ConcurrencyLimit;
  private readonly pauses = new PauseState();
  private topics: StoredTopic[] = [];
  private group: ConsumerGroup | null = null;

  constructor(
    private readonly host: ConsumerHost,
    readonly options: ConsumerOptions,
  ) {
    this.fromBeginning = options.fromBeginning ?? false;
    this.maxBatchSize = options.maxBatchSize ?? 500;
    this.slots = new ConcurrencyLimit(options.concurrency ?? 1);
  }

  get groupId(): string {
    return this.options.groupId;
  }

  get rank(): number | undefined {
    return this.options.rank;
  }

  async start(): Promise<void> {
    if (this.group) return;
    this.topics = this.resolveSubscription();
    this.group = this.host.join(this);
  }

  pause(topic: string, partitions?: number[]): void {
    this.pauses.pause(topic, partitions);
  }

  resume(topic: string, partitions?: number[]): void {
    this.pauses.resume(topic, partitions);
    const stored = this.host.topic(topic);
    if (stored) this.group?.wake(stored, partitions);
  }

  async refreshSubscription(): Promise<void> {
    this.topics = this.resolveSubscription();
    this.group?.rebalance();
  }

  /** A topic was created; returns whether this member now consumes it. */
  adoptIfMatching(topic: StoredTopic): boolean {
    if (!this.group || !this.matchesPattern(topic.name) || this.topics.includes(topic)) return false;
    this.topics.push(topic);
    return true;
  }

  assignment(): TopicPartitions[] {
    return this.group?.assignmentOf(this) ?? [];
  }

  async stop(): Promise<void> {
    const group = this.group;
    if (!group) return;
    this.group = null;
    this.host.forget(this);
    await group.leave(this);
  }

  subscription(): readonly StoredTopic[] {
    return this.topics;
  }

  isPaused(topic: string, partition: number): boolean {
    return this.pauses.isPaused(topic, partition);
  }

  handle(batch: RecordBatch): Promise<void | BatchOutcome> {
    return this.options.handleBatch(batch);
  }

  private resolveSubscription(): StoredTopic[] {
    const topics = new Set((this.options.topics ?? []).map((name) => this.host.ensureTopic(name)));
    for (const topic of this.host.topics()) if (this.matchesPattern(topic.name)) topics.add(topic);
    return [...topics];
  }

  private matchesPattern(name: string): boolean {
    // `search` ignores the g/y flags' lastIndex state, unlike `test`.
    return this.options.topicPattern !== undefined && name.search(this.options.topicPattern) !== -1;
  }
}
