import type { Broker, BrokerLogger, Consumer, ConsumerOptions, Producer } from './broker.js';
import { openEmbeddedBroker, type EmbeddedBrokerOptions } from './embedded/embedded-broker.js';
import type { FsyncMode } from './embedded/log-store.js';
import { connectKafkaBroker, type KafkaBrokerOptions } from './kafka/kafka-broker.js';

export interface CreateBrokerOptions {
  /** Kafka bootstrap brokers (`host:port`); when given and non-empty, Kafka is the backend. */
  kafkaBrokers?: string[];
  clientId?: string;
  /** Directory of the embedded log, used when no Kafka brokers are given. */
  dataDir: string;
  fsync?: FsyncMode;
  logger?: BrokerLogger;
  /** Further Kafka settings (timeouts, idempotence, fetch wait). */
  kafka?: Omit<KafkaBrokerOptions, 'brokers' | 'clientId' | 'logger'>;
  /** Further embedded settings (retention, partitions of auto-created topics, limits). */
  embedded?: Omit<EmbeddedBrokerOptions, 'dataDir' | 'fsync' | 'logger'>;
  /** Told of every publish that succeeded, whoever made it (metrics subscribe here). */
  onPublish?: (event: PublishEvent) => void;
  /** Told of every batch a consumer's handler finished, whichever group it is (metrics subscribe here). */
  onBatch?: (event: BatchEvent) => void;
  /** The wall clock record timestamps are compared with (epoch ms; `Date.now` by default). */
  now?: () => number;
}

export interface PublishEvent {
  topic: string;
  messages: number;
  durationMs: number;
}

export interface BatchEvent {
  groupId: string;
  topic: string;
  records: number;
  /**
   * How long the batch's oldest record was in the log before its handler got it: the queue in front of
   * a hop, its broker's fetch wait included. Clocks of different machines (a Kafka broker stamps the
   * record) may skew it; it never goes below 0.
   */
  waitedMs: number;
  /** How long the handler took, failed batches included (they are handed over again). */
  durationMs: number;
}

/** Its one producer reports each send: publish timing lives in the path every publish takes. */
function reportingPublishes(inner: Producer, onPublish: (event: PublishEvent) => void): Producer {
  return {
    async send(topic, messages, options) {
      const startedAt = performance.now();
      await inner.send(topic, messages, options);
      onPublish({ topic, messages: messages.length, durationMs: performance.now() - startedAt });
    },
  };
}

/** Each consumer's handler reports its batches: the wait in front of every hop, on either adapter. */
function reportingBatches(broker: Broker, onBatch: (event: BatchEvent) => void, now: () => number): (options: ConsumerOptions) => Consumer {
  return (options) =>
    broker.consumer({
      ...options,
      async handleBatch(batch) {
        const handedAt = now();
        const waitedMs = Math.max(0, handedAt - (batch.records[0]?.timestamp ?? handedAt));
        const startedAt = performance.now();
        try {
          return await options.handleBatch(batch);
        } finally {
          onBatch({ groupId: options.groupId, topic: batch.topic, records: batch.records.length, waitedMs, durationMs: performance.now() - startedAt });
        }
      },
    });
}

/** Kafka when brokers are configured, else the embedded log in `dataDir`. */
export async function createBroker(options: CreateBrokerOptions): Promise<Broker> {
  const broker =
    options.kafkaBrokers && options.kafkaBrokers.length > 0
      ? await connectKafkaBroker({ ...options.kafka, brokers: options.kafkaBrokers, clientId: options.clientId, logger: options.logger })
      : await openEmbeddedBroker({ ...options.embedded, dataDir: options.dataDir, fsync: options.fsync, logger: options.logger });
  if (!options.onPublish && !options.onBatch) return broker;
  const producer = options.onPublish ? reportingPublishes(broker.producer(), options.onPublish) : broker.producer();
  const consumer = options.onBatch ? reportingBatches(broker, options.onBatch, options.now ?? Date.now) : (consumerOptions: ConsumerOptions) => broker.consumer(consumerOptions);
  return { producer: () => producer, consumer, admin: () => broker.admin(), close: () => broker.close() };
}
