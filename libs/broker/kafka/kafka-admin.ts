import type { Admin as KafkaJsAdmin } from 'kafkajs';
import type { Admin, BrokerLogger, TopicLag, TopicSpec } from '../broker.js';
import { assertTopicName } from '../topic-name.js';
import { BrokerUnavailableError } from '../errors.js';
import { toBrokerError, whileTopicsSettle } from './kafka-errors.js';
import { topicPrefix, type TopicPrefix } from './topic-prefix.js';

/** A partition and an offset in it. */
export interface TopicOffset {
  topic: string;
  partition: number;
  offset: string;
}

/** How the relay's topics are replicated: every one of them carries acknowledged webhooks or their state. */
export interface TopicDurability {
  replicationFactor: number;
  minInsyncReplicas: number;
}

/**
 * Replicated 3 times, a write acknowledged by 2 (acks -1 waits for the in-sync replicas): one broker may
 * fail without losing or refusing anything. A cluster of fewer than 3 brokers gets 1 and 1 (warned at start).
 */
export const topicDurability = (brokers: number): TopicDurability =>
  brokers >= 3 ? { replicationFactor: 3, minInsyncReplicas: 2 } : { replicationFactor: 1, minInsyncReplicas: 1 };

/** Topic provisioning and lag over a connected kafkajs admin client. */
export class KafkaAdmin implements Admin {
  /**
   * Topics this admin ensured, by cluster name. A new topic reaches the brokers one after the other, and
   * kafkajs asks any of them for the topic list: one that does not know it yet would hide it from a
   * pattern subscription refreshed right after its creation.
   */
  private readonly ensured = new Set<string>();

  constructor(
    private readonly client: KafkaJsAdmin,
    private readonly logger: BrokerLogger,
    private readonly names: TopicPrefix = topicPrefix(),
    private readonly durability: TopicDurability = topicDurability(3),
    /**
     * A new admin client seeded with the broker at `address` alone, to ask that broker itself whether it
     * knows a new topic; without it, the broker kafkajs picks is asked.
     */
    private readonly seededWith?: (address: string) => KafkaJsAdmin,
  ) {}

  async ensureTopics(specs: TopicSpec[]): Promise<void> {
    const qualified = specs.map((spec) => ({ ...spec, topic: this.names.qualify(spec.topic) }));
    for (const spec of qualified) assertTopicName(spec.topic);
    const existing = new Set(await this.clusterTopics());
    const missing = qualified.filter((spec) => !existing.has(spec.topic));
    if (missing.length === 0) return;
    await this.create(missing);
    for (const spec of missing) this.ensured.add(spec.topic);
  }

  private async create(missing: TopicSpec[]): Promise<void> {
    const { replicationFactor, minInsyncReplicas } = this.durability;
    const topics = missing.map((spec) => spec.topic);
    try {
      // Not kafkajs' waitForLeaders (on by default): its Metadata poll fails on the UNKNOWN_TOPIC_OR_PARTITION a broker
      // answers until the new topic reaches it (Kafka 3.9.2 often, 4.4.0 rarely), though the topic was created.
      await this.client.createTopics({
        topics: missing.map((spec) => ({
          topic: spec.topic,
          numPartitions: spec.partitions,
          replicationFactor,
          configEntries: [{ name: 'min.insync.replicas', value: String(minInsyncReplicas) }],
        })),
        waitForLeaders: false,
      });
    } catch (error) {
      // Some clusters (librdkafka's mock, locked-down managed Kafka) refuse CreateTopics; a metadata request
      // (below) makes brokers with auto-creation create them, with the broker's default partition count.
      this.logger.warn({ err: error, topics }, 'createTopics failed; relying on topic auto-creation');
    }
    try {
      await this.leadersOf(topics);
    } catch (cause) {
      throw toBrokerError(cause, `Kafka could not create topics ${topics.join(', ')}`);
    }
  }

  /**
   * Resolves once every broker knows every partition of `topics` with its leader. Until a broker knows a
   * new topic it answers requests about it (a consumer's subscribe and ListOffsets, a produce, a commit)
   * with UNKNOWN_TOPIC_OR_PARTITION, and a kafkajs consumer that meets that at its join crashes and joins
   * again, a rebalance that fails the group's commits (Kafka 3.9.2, clean-clone CI).
   */
  private async leadersOf(topics: string[]): Promise<void> {
    if (!this.seededWith) return whileTopicsSettle(() => ledOn(this.client, topics));
    const { brokers } = await this.client.describeCluster();
    await Promise.all(brokers.map(({ host, port }) => this.ledOnBroker(`${host}:${port}`, topics)));
  }

  /**
   * kafkajs refreshes its metadata from a broker it is connected to, and a fresh client is connected to its
   * seed alone until that refresh succeeds (its answer then comes from any broker): so a fresh client per
   * check, seeded with the broker to ask.
   */
  private async ledOnBroker(address: string, topics: string[]): Promise<void> {
    const client = this.seededWith!(address);
    try {
      await client.connect();
      await whileTopicsSettle(() => ledOn(client, topics));
    } finally {
      await client.disconnect();
    }
  }

  /** The relay's topics (those with its prefix), by the pipeline's names. */
  async listTopics(): Promise<string[]> {
    return (await this.clusterTopics()).map((name) => this.names.local(name)).filter((name) => name !== undefined);
  }

  /** Every topic on the cluster but Kafka's own, by their cluster names. */
  private async clusterTopics(): Promise<string[]> {
    try {
      const listed = (await this.client.listTopics()).filter((name) => !name.startsWith('__'));
      return [...new Set([...listed, ...this.ensured])];
    } catch (error) {
      throw toBrokerError(error, 'Kafka listTopics failed');
    }
  }

  /**
   * The partitions of `topics` on which `groupId` has never committed, each with the offset at which it
   * ends now: where a group reading new records only must start (KafkaConsumer seeks there at its join).
   * Group and topics by their cluster names.
   */
  async endsWhereUncommitted(groupId: string, topics: string[]): Promise<TopicOffset[]> {
    try {
      const starts: TopicOffset[] = [];
      for (const { topic, partitions } of await this.client.fetchOffsets({ groupId, topics })) {
        const uncommitted = partitions.filter((entry) => Number(entry.offset) < 0);
        if (uncommitted.length === 0) continue;
        const ends = new Map((await this.client.fetchTopicOffsets(topic)).map((entry) => [entry.partition, entry.high]));
        for (const { partition } of uncommitted) starts.push({ topic, partition, offset: ends.get(partition) ?? '0' });
      }
      return starts;
    } catch (error) {
      throw toBrokerError(error, `Kafka could not read where group ${groupId} starts`);
    }
  }

  async lag(groupId: string, topics?: string[]): Promise<TopicLag[]> {
    try {
      const existing = new Set(await this.listTopics());
      const names = (topics ?? [...existing]).filter((name) => existing.has(name)).map((name) => this.names.qualify(name));
      if (names.length === 0) return [];
      const committed = await this.client.fetchOffsets({ groupId: this.names.qualify(groupId), topics: names });
      const lags: TopicLag[] = [];
      for (const { topic, partitions } of committed) {
        if (!topics && partitions.every((entry) => Number(entry.offset) < 0)) continue;
        const ends = new Map((await this.client.fetchTopicOffsets(topic)).map((entry) => [entry.partition, entry]));
        for (const { partition, offset } of partitions) {
          const end = ends.get(partition);
          if (!end) continue;
          const from = Number(offset) >= 0 ? Number(offset) : Number(end.low);
          lags.push({ groupId, topic: this.names.local(topic)!, partition, committed: offset, end: end.high, lag: Math.max(0, Number(end.high) - from) });
        }
      }
      return lags;
    } catch (error) {
      throw toBrokerError(error, `Kafka lag of group ${groupId} failed`);
    }
  }
}

/** Resolves if the broker `client` asks knows every partition of `topics` with its leader. */
async function ledOn(client: KafkaJsAdmin, topics: string[]): Promise<void> {
  const metadata = await client.fetchTopicMetadata({ topics });
  const led = metadata.topics.every((topic) => topic.partitions.length > 0 && topic.partitions.every((partition) => partition.leader >= 0));
  if (!led) throw new BrokerUnavailableError(`Kafka topics ${topics.join(', ')} have no leader yet`);
}
