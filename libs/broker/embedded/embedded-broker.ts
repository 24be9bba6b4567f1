import fs from 'node:fs';
import path from 'node:path';
import type {
  Admin,
  Broker,
  BrokerLogger,
  Consumer,
  ConsumerOptions,
  OutgoingMessage,
  Producer,
  TopicLag,
  TopicSpec,
} from '../broker.js';
import { DEFAULT_ERROR_BACKOFF, type BackoffOptions } from '../../time/backoff.js';
import { BrokerRequestError, BrokerUnavailableError, MessageTooLargeError } from '../errors.js';
import { partitionFor } from '../partitioner.js';
import { silentLogger } from '../silent-logger.js';
import { assertTopicName } from '../topic-name.js';
import { Checkpointer } from '../../sqlite/wal-checkpointer.js';
import { ConsumerGroup } from './consumer-group.js';
import { EmbeddedConsumer, type ConsumerHost } from './embedded-consumer.js';
import { GroupCommit } from './group-commit.js';
import { LogStore, type AppendedPartitions, type FsyncMode, type PendingAppend, type StoredTopic } from './log-store.js';
import { OwnerLock } from '../../storage/owner-lock.js';
import { DEFAULT_RETENTION, Retention, type RetentionOptions } from './retention.js';

/** The largest record value the log takes unless told otherwise: above every default plan's payload limit. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface EmbeddedBrokerOptions {
  /** Directory of the log file `broker.sqlite`. */
  dataDir: string;
  /** `normal`: durable across process crashes; `full`: also across power loss (fsync per commit). */
  fsync?: FsyncMode;
  logger?: BrokerLogger;
  /** Partitions of topics created implicitly (by a send or a subscription), as Kafka's auto-creation. */
  defaultPartitions?: number;
  maxMessageBytes?: number;
  /** Upper bound on the value bytes of one batch handed to a consumer (always at least one record). */
  maxBatchBytes?: number;
  retention?: Partial<RetentionOptions>;
  /** Back-off before a failed batch is delivered again. */
  errorBackoff?: BackoffOptions;
  /** Stamps appended records (default `Date.now`); a test gives the clock its consumers compare them with. */
  now?: () => number;
}

export const EMBEDDED_LOG_FILE = 'broker.sqlite';

/** Opens (or creates) the embedded log in `options.dataDir`; this process owns it until `close`. */
export function openEmbeddedBroker(options: EmbeddedBrokerOptions): Broker {
  return new EmbeddedBroker(options);
}

class EmbeddedBroker implements Broker, ConsumerHost {
  private readonly lock: OwnerLock;
  private readonly store: LogStore;
  private readonly checkpointer: Checkpointer;
  private readonly commits: GroupCommit;
  private readonly retention: Retention;
  private readonly logger: BrokerLogger;
  private readonly defaultPartitions: number;
  private readonly maxMessageBytes: number;
  private readonly maxBatchBytes: number;
  private readonly errorBackoff: BackoffOptions;
  private readonly now: () => number;
  private readonly groups = new Map<string, ConsumerGroup>();
  private readonly members = new Set<EmbeddedConsumer>();
  private readonly sharedProducer: Producer = { send: (topic, messages) => this.send(topic, messages) };
  private readonly sharedAdmin: Admin = {
    ensureTopics: async (topics) => this.ensureTopics(topics),
    listTopics: async () => this.listTopics(),
    lag: async (groupId, topics) => this.lag(groupId, topics),
  };
  /** `closing`: consumers are finishing their batches, which may still send and commit. */
  private state: 'open' | 'closing' | 'closed' = 'open';

  constructor(options: EmbeddedBrokerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.defaultPartitions = options.defaultPartitions ?? 4;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.maxBatchBytes = options.maxBatchBytes ?? 16 * 1024 * 1024;
    this.errorBackoff = options.errorBackoff ?? DEFAULT_ERROR_BACKOFF;
    this.now = options.now ?? Date.now;
    const file = path.join(options.dataDir, EMBEDDED_LOG_FILE);
    const fsync = options.fsync ?? 'normal';
    fs.mkdirSync(options.dataDir, { recursive: true });
    const lock = OwnerLock.tryAcquire(file);
    if (!lock) throw new BrokerUnavailableError(`The embedded log ${file} is in use by another process`);
    this.lock = lock;
    try {
      this.store = LogStore.open(file, fsync);
    } catch (error) {
      this.lock.release();
      throw error;
    }
    this.commits = new GroupCommit(this.store, (appended) => this.wake(appended));
    this.checkpointer = Checkpointer.start({ file, synchronous: fsync === 'full' ? 'FULL' : 'NORMAL' }, this.commits, (error) =>
      this.logger.warn({ err: error, file }, 'Embedded log checkpoint failed'),
    );
    this.retention = new Retention(this.store, { ...DEFAULT_RETENTION, ...options.retention }, this.logger, () =>
      [...this.members].map((member) => member.groupId),
    );
    this.retention.start();
  }

  producer(): Producer {
    return this.sharedProducer;
  }

  consumer(options: ConsumerOptions): Consumer {
    if (!options.topics?.length && !options.topicPattern) throw new TypeError('A consumer needs topics or a topicPattern');
    return new EmbeddedConsumer(this, options);
  }

  admin(): Admin {
    return this.sharedAdmin;
  }

  async close(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'closing';
    await Promise.all([...this.members].map((member) => member.stop()));
    this.state = 'closed';
    await this.retention.stop();
    this.commits.flush();
    await this.checkpointer.stop();
    this.store.close();
    this.lock.release();
  }

  topic(name: string): StoredTopic | undefined {
    return this.store.topic(name);
  }

  topics(): StoredTopic[] {
    return this.store.topics();
  }

  ensureTopic(name: string, partitions = this.defaultPartitions): StoredTopic {
    this.assertUsable();
    const existing = this.store.topic(name);
    if (existing) return existing;
    assertTopicName(name);
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new BrokerRequestError(`Topic ${name}: partitions must be a positive integer, not ${partitions}`);
    }
    const topic = this.store.createTopic(name, partitions);
    for (const [groupId, group] of this.groups) this.adoptTopic(groupId, group, topic);
    return topic;
  }

  join(member: EmbeddedConsumer): ConsumerGroup {
    if (this.state !== 'open') throw new BrokerUnavailableError('The embedded broker is closed');
    let group = this.groups.get(member.groupId);
    if (!group) {
      group = new ConsumerGroup({
        groupId: member.groupId,
        store: this.store,
        commits: this.commits,
        logger: this.logger,
        errorBackoff: this.errorBackoff,
        maxBatchBytes: this.maxBatchBytes,
      });
      this.groups.set(member.groupId, group);
    }
    this.members.add(member);
    group.join(member);
    return group;
  }

  forget(member: EmbeddedConsumer): void {
    this.members.delete(member);
  }

  /** Pattern subscriptions follow topic creation without waiting for `refreshSubscription`. */
  private adoptTopic(groupId: string, group: ConsumerGroup, topic: StoredTopic): void {
    let adopted = false;
    for (const member of this.members) {
      if (member.groupId === groupId && member.adoptIfMatching(topic)) adopted = true;
    }
    if (adopted) group.rebalance();
  }

  private assertUsable(): void {
    if (this.state === 'closed') throw new BrokerUnavailableError('The embedded broker is closed');
  }

  private send(topicName: string, messages: OutgoingMessage[]): Promise<void> {
    try {
      this.assertUsable();
      if (messages.length === 0) return Promise.resolve();
      const topic = this.ensureTopic(topicName);
      const timestamp = this.now();
      const appends: PendingAppend[] = messages.map((message) => {
        if (message.value.length > this.maxMessageBytes) {
          throw new MessageTooLargeError(topicName, message.value.length, this.maxMessageBytes);
        }
        return {
          topic,
          partition: partitionFor(message.key, topic.partitions),
          key: message.key,
          headers: { ...message.headers },
          value: message.value,
          timestamp,
        };
      });
      return this.commits.append(appends);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private ensureTopics(specs: TopicSpec[]): void {
    for (const spec of specs) this.ensureTopic(spec.topic, spec.partitions);
  }

  private listTopics(): string[] {
    this.assertUsable();
    return this.store.topics().map((topic) => topic.name);
  }

  private lag(groupId: string, topicNames?: string[]): TopicLag[] {
    this.assertUsable();
    const committed = new Map<StoredTopic, Map<number, number>>();
    for (const { topic, partition, offset } of this.store.committedByGroup(groupId)) {
      let partitions = committed.get(topic);
      if (!partitions) committed.set(topic, (partitions = new Map()));
      partitions.set(partition, offset);
    }
    const topics = topicNames
      ? topicNames.map((name) => this.store.topic(name)).filter((topic): topic is StoredTopic => topic !== undefined)
      : [...committed.keys()];
    return topics.flatMap((topic) =>
      topic.ends.map((end, partition) => {
        const offset = committed.get(topic)?.get(partition);
        const from = offset ?? this.store.lowOffset(topic, partition) ?? end;
        return {
          groupId,
          topic: topic.name,
          partition,
          committed: String(offset ?? -1),
          end: String(end),
          lag: end - from,
        };
      }),
    );
  }

  private wake(appended: AppendedPartitions): void {
    for (const [, group] of this.groups) {
      for (const [topic, partitions] of appended) group.wake(topic, partitions);
    }
  }
}
