import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { Context } from 'mocha';
import { kafkaRuntimeAvailable, readClusterState, startKafkaCluster } from './kafka-cluster.js';
import { kcatAvailable, startKafkaMock } from './kafka-mock.js';

/**
 * "A Kafka cluster" for a suite: the real one when there is one, the librdkafka mock as a fast local
 * option. In order: `KAFKA_BROKERS` in the test runner's environment, the cluster `npm run kafka:up` left
 * in this checkout, else (not on CI) a fresh mock cluster where kcat is installed. With CI=true a missing
 * real cluster fails the suite; `KAFKA_TEST_CLUSTER=mock` asks for the mock even where a real one runs.
 */
export interface KafkaTestCluster {
  kind: 'real' | 'mock';
  brokers: string[];
  /**
   * A prefix of this suite's own for topic and group names (`KAFKA_TOPIC_PREFIX` of a relay): suites and
   * runs that share a real cluster never read each other's records. Empty on a mock, which is the suite's own.
   */
  prefix: string;
  /** Relay settings for this cluster: brokers, prefix, and the mock's short fetch wait. */
  env: Record<string, string>;
  /** Consumer timings a group on this cluster can keep (the mock holds joins; Kafka refuses sessions under 6 s). */
  consumer: { maxWaitTimeInMs: number; heartbeatIntervalMs: number; sessionTimeoutMs: number; rebalanceTimeoutMs: number };
  /** Deletes the suite's topics and groups (real) or stops the mock. */
  cleanup(): Promise<void>;
}

/**
 * The fetch wait of relays on the mock cluster: short, since the mock holds a fetch that finds no records
 * for the whole wait even when records arrive meanwhile, so each hop's latency varies by up to one wait.
 */
export const MOCK_FETCH_WAIT_MS = 100;

export function realKafkaBrokers(): string[] | undefined {
  if (process.env.KAFKA_TEST_CLUSTER === 'mock') return undefined;
  const listed = process.env.KAFKA_BROKERS?.split(',').filter(Boolean);
  return listed?.length ? listed : readClusterState()?.brokers;
}

export async function kafkaClusterFor(mocha: Context, options: { brokerCount?: number } = {}): Promise<KafkaTestCluster> {
  const brokers = realKafkaBrokers();
  if (brokers) return onRealKafka(brokers);
  if (process.env.CI === 'true') {
    throw new Error('CI runs the Kafka suites on a real cluster: start one with `npm run kafka:up` (or set KAFKA_BROKERS)');
  }
  if (!kcatAvailable()) {
    console.log('      skipped: no Kafka cluster (npm run kafka:up) and no kcat for the librdkafka mock');
    mocha.skip();
  }
  const mock = await startKafkaMock({ brokerCount: options.brokerCount ?? 3 });
  return {
    kind: 'mock',
    brokers: mock.brokers,
    prefix: '',
    env: { KAFKA_BROKERS: mock.brokers.join(','), KAFKA_MAX_WAIT_MS: String(MOCK_FETCH_WAIT_MS), KAFKA_SESSION_TIMEOUT_MS: '6000' },
    // The mock holds a group's first join for 3 s (members must outlive that without heartbeats) and a
    // rejoin after the last member left for sessionTimeout - 1 s.
    consumer: { maxWaitTimeInMs: MOCK_FETCH_WAIT_MS, heartbeatIntervalMs: 300, sessionTimeoutMs: 4_500, rebalanceTimeoutMs: 4_500 },
    cleanup: () => mock.stop(),
  };
}

/** A running Apache Kafka cluster, shared: this user's topics and groups get a prefix of their own. */
export function onRealKafka(brokers: string[]): KafkaTestCluster {
  const prefix = `t${randomBytes(4).toString('hex')}.`;
  return {
    kind: 'real',
    brokers,
    prefix,
    // Kafka's smallest session (group.min.session.timeout.ms) is 6 s; the relay's default wait is kept.
    env: { KAFKA_BROKERS: brokers.join(','), KAFKA_TOPIC_PREFIX: prefix, KAFKA_SESSION_TIMEOUT_MS: '6000' },
    consumer: { maxWaitTimeInMs: 100, heartbeatIntervalMs: 500, sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 10_000 },
    cleanup: () => deletePrefixed(brokers, prefix),
  };
}

/** Deletes the topics and consumer groups named with `prefix`; a cluster gone meanwhile is left as it is. */
async function deletePrefixed(brokers: string[], prefix: string): Promise<void> {
  const admin = new Kafka({ clientId: 'test-cleanup', brokers, logLevel: logLevel.NOTHING, retry: { retries: 1 } }).admin();
  try {
    await admin.connect();
    const groups = (await admin.listGroups()).groups.map((group) => group.groupId).filter((id) => id.startsWith(prefix));
    if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
  } catch (error) {
    console.log(`      Kafka cleanup of ${prefix}* left topics behind: ${(error as Error).message}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * A Kafka cluster a suite may freeze and stop: never the shared one. Apache Kafka, a cluster of the suite's
 * own started in a temp directory, where a JVM and Maven are installed (mandatory on CI); else, locally,
 * the librdkafka mock (`KAFKA_TEST_CLUSTER=mock` asks for it even where Kafka could run: it starts in
 * under a second where a JVM broker takes 10-60 s).
 */
export interface KafkaClusterToFault {
  kind: 'real' | 'mock';
  brokers: string[];
  /** Relay settings for this cluster. */
  env: Record<string, string>;
  /** Freezes every broker (SIGSTOP) and resolves once they are frozen: requests sent after that stay unanswered until `resume`. */
  pause(): Promise<void>;
  resume(): void;
  /** SIGKILLs every broker: connections to them are refused from then on. */
  stopBrokers(): Promise<void>;
  /** Stops whatever still runs and deletes the cluster's data. */
  cleanup(): Promise<void>;
}

export async function kafkaClusterToFault(mocha: Context, options: { brokerCount?: number } = {}): Promise<KafkaClusterToFault> {
  const brokerCount = options.brokerCount ?? 1;
  if (process.env.KAFKA_TEST_CLUSTER !== 'mock' && kafkaRuntimeAvailable()) {
    const cluster = await startKafkaCluster({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'relay-kafka-own-')), brokerCount, heapMb: 256 });
    const ids = cluster.nodes.map((node) => node.id);
    return {
      kind: 'real',
      brokers: cluster.brokers,
      env: { KAFKA_BROKERS: cluster.brokers.join(','), KAFKA_SESSION_TIMEOUT_MS: '6000' },
      pause: async () => void (await Promise.all(ids.map((id) => cluster.pause(id)))),
      resume: () => ids.forEach((id) => cluster.resume(id)),
      stopBrokers: async () => void (await Promise.all(ids.map((id) => cluster.kill(id)))),
      cleanup: () => cluster.stop(),
    };
  }
  if (process.env.CI === 'true') throw new Error('CI runs the Kafka fault cases on Apache Kafka: java and mvn are required (apt-get install openjdk-17-jre-headless maven)');
  if (!kcatAvailable()) {
    console.log('      skipped: neither java and mvn (Apache Kafka) nor kcat (the librdkafka mock) is installed');
    mocha.skip();
  }
  const mock = await startKafkaMock({ brokerCount });
  return {
    kind: 'mock',
    brokers: mock.brokers,
    env: { KAFKA_BROKERS: mock.brokers.join(','), KAFKA_MAX_WAIT_MS: String(MOCK_FETCH_WAIT_MS) },
    pause: () => mock.pause(),
    resume: () => mock.resume(),
    stopBrokers: () => mock.stop(),
    cleanup: () => mock.stop(),
  };
}
