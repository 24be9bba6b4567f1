import { Kafka, logLevel } from 'kafkajs';
import './kafkajs-request-queue.js';
import type { Admin, Broker, BrokerLogger, Consumer, ConsumerOptions, Producer } from '../broker.js';
import { DEFAULT_ERROR_BACKOFF, type BackoffOptions } from '../../time/backoff.js';
import { BrokerUnavailableError } from '../errors.js';
import { silentLogger } from '../silent-logger.js';
import { within } from '../../time/within.js';
import { KafkaAdmin, topicDurability, type TopicDurability } from './kafka-admin.js';
import { KafkaConsumer, type GroupJoin, type KafkaConsumerSettings } from './kafka-consumer.js';
import { kafkaLogCreator } from './kafka-logging.js';
import { KafkaProducer } from './kafka-producer.js';
import { topicPrefix, type TopicPrefix } from './topic-prefix.js';

export interface KafkaBrokerOptions {
  brokers: string[];
  clientId?: string;
  /** Prefix of the relay's topic and group names on the cluster (default none; see topic-prefix.ts). */
  topicPrefix?: string;
  /** Receives kafkajs' warnings and errors; without one kafkajs is silent. */
  logger?: BrokerLogger;
  /** Ask for an idempotent producer (default true); falls back to a plain acks -1 producer where refused. */
  idempotent?: boolean;
  /** How long a fetch waits for records (default 500). librdkafka's mock cluster always waits this long. */
  maxWaitTimeInMs?: number;
  heartbeatIntervalMs?: number;
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  /** Bound on reaching the cluster at start (default 10 s). */
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Bytes of records in one produce request (default 4 MiB; a single larger record goes alone). */
  maxRequestBytes?: number;
  /**
   * Sends asked to gather (the gateway's) go in at most one produce request per this time while busy
   * (default 0: as soon as the previous is answered); a send after a quiet spell goes at once.
   */
  gatherMs?: number;
  /** Back-off before a failed batch is delivered again. */
  errorBackoff?: BackoffOptions;
  /**
   * At most one offset commit per group member in this time (default 100 ms): handled offsets wait for it
   * rather than each batch paying a commit round trip. A crash can deliver that much work again.
   */
  commitIntervalMs?: number;
  /** Told of every join of a consumer group (each rebalance): how long the join took, and what was assigned. */
  onGroupJoin?: (join: GroupJoin) => void;
}

/** Connects to the cluster (bounded by `connectTimeoutMs`) and returns a broker over it. */
export async function connectKafkaBroker(options: KafkaBrokerOptions): Promise<Broker> {
  const logger = options.logger ?? silentLogger;
  const clientOf = (brokers: string[]) =>
    new Kafka({
      clientId: options.clientId ?? 'webhook-relay',
      brokers,
      connectionTimeout: 3_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      retry: { initialRetryTime: 100, maxRetryTime: 2_000, retries: 5 },
      logLevel: options.logger ? logLevel.WARN : logLevel.NOTHING,
      logCreator: kafkaLogCreator(logger),
    });
  const kafka = clientOf(options.brokers);
  const admin = kafka.admin();
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  let brokerCount: number;
  try {
    brokerCount = await within(connectTimeoutMs, admin.connect().then(async () => (await admin.describeCluster()).brokers.length), 'the cluster');
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw new BrokerUnavailableError(
      `Kafka brokers ${options.brokers.join(',')} are unreachable: ${(error as Error).message}`,
      error,
    );
  }
  const durability = topicDurability(brokerCount);
  if (durability.replicationFactor < 3) {
    logger.warn({ brokers: brokerCount, ...durability }, 'Kafka cluster has fewer than 3 brokers: topics get 1 replica, and a broker failure loses or refuses writes');
  }
  return new KafkaBroker(kafka, admin, options, logger, durability, (address) => clientOf([address]).admin());
}

class KafkaBroker implements Broker {
  private readonly sharedProducer: KafkaProducer;
  private readonly sharedAdmin: KafkaAdmin;
  private readonly consumers = new Set<KafkaConsumer>();
  private readonly consumerSettings: KafkaConsumerSettings;
  private readonly names: TopicPrefix;
  private readonly prefixedProducer: Producer;
  private closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly adminClient: ReturnType<Kafka['admin']>,
    options: KafkaBrokerOptions,
    private readonly logger: BrokerLogger,
    durability: TopicDurability,
    seededWith: (address: string) => ReturnType<Kafka['admin']>,
  ) {
    this.sharedProducer = new KafkaProducer(
      kafka,
      { idempotent: options.idempotent ?? true, requestTimeoutMs: options.requestTimeoutMs ?? 30_000, maxRequestBytes: options.maxRequestBytes ?? 4 * 1024 * 1024, gatherMs: options.gatherMs ?? 0 },
      logger,
    );
    this.names = topicPrefix(options.topicPrefix);
    this.prefixedProducer = { send: (topic, messages, sendOptions) => this.sharedProducer.send(this.names.qualify(topic), messages, sendOptions) };
    this.sharedAdmin = new KafkaAdmin(adminClient, logger, this.names, durability, seededWith);
    this.consumerSettings = {
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? 500,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3_000,
      sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
      rebalanceTimeoutMs: options.rebalanceTimeoutMs ?? 60_000,
      errorBackoff: options.errorBackoff ?? DEFAULT_ERROR_BACKOFF,
      commitIntervalMs: options.commitIntervalMs ?? 100,
      onGroupJoin: options.onGroupJoin,
    };
  }

  producer(): Producer {
    return this.prefixedProducer;
  }

  consumer(options: ConsumerOptions): Consumer {
    if (this.closed) throw new BrokerUnavailableError('The Kafka broker is closed');
    if (!options.topics?.length && !options.topicPattern) throw new TypeError('A consumer needs topics or a topicPattern');
    return new KafkaConsumer(
      {
        kafka: this.kafka,
        logger: this.logger,
        settings: this.consumerSettings,
        listTopics: () => this.sharedAdmin.listTopics(),
        names: this.names,
        endsWhereUncommitted: (groupId, topics) => this.sharedAdmin.endsWhereUncommitted(groupId, topics),
        track: (member) => this.consumers.add(member),
        forget: (member) => this.consumers.delete(member),
      },
      options,
    );
  }

  admin(): Admin {
    return this.sharedAdmin;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    await this.sharedProducer.close();
    await this.adminClient.disconnect();
  }
}
