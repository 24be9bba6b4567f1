import type { Broker, BrokerLogger } from './broker.js';
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
}

/** Kafka when brokers are configured, else the embedded log in `dataDir`. */
export async function createBroker(options: CreateBrokerOptions): Promise<Broker> {
  if (options.kafkaBrokers && options.kafkaBrokers.length > 0) {
    return connectKafkaBroker({ ...options.kafka, brokers: options.kafkaBrokers, clientId: options.clientId, logger: options.logger });
  }
  return openEmbeddedBroker({ ...options.embedded, dataDir: options.dataDir, fsync: options.fsync, logger: options.logger });
}
