import type { Broker, BrokerLogger, Producer } from './broker.js';
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
}

export interface PublishEvent {
  topic: string;
  messages: number;
  durationMs: number;
}

/** The broker with its one producer reporting each send: publish timing lives in the path every publish takes. */
function reportingPublishes(broker: Broker, onPublish: (event: PublishEvent) => void): Broker {
  const inner = broker.producer();
  const producer: Producer = {
    async send(topic, messages, options) {
      const startedAt = performance.now();
      await inner.send(topic, messages, options);
      onPublish({ topic, messages: messages.length, durationMs: performance.now() - startedAt });
    },
  };
  return { producer: () => producer, consumer: (options) => broker.consumer(options), admin: () => broker.admin(), close: () => broker.close() };
}

/** Kafka when brokers are configured, else the embedded log in `dataDir`. */
export async function createBroker(options: CreateBrokerOptions): Promise<Broker> {
  const broker =
    options.kafkaBrokers && options.kafkaBrokers.length > 0
      ? await connectKafkaBroker({ ...options.kafka, brokers: options.kafkaBrokers, clientId: options.clientId, logger: options.logger })
      : await openEmbeddedBroker({ ...options.embedded, dataDir: options.dataDir, fsync: options.fsync, logger: options.logger });
  return options.onPublish ? reportingPublishes(broker, options.onPublish) : broker;
}
