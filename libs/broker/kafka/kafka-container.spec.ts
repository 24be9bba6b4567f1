import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';
import { unusedLoopbackPort } from '../../testing/free-port.js';
import { describeBrokerContract } from '../../testing/broker-contract.js';
import { connectKafkaBroker } from './kafka-broker.js';

const KAFKA_IMAGE = 'apache/kafka:3.9.0';

describe('kafka broker on a real Kafka (testcontainers)', function () {
  let container: StartedTestContainer | undefined;
  let brokers: string[] = [];

  before(async function () {
    this.timeout(300_000);
    try {
      await getContainerRuntimeClient();
    } catch (error) {
      console.log(`    skipped: no container runtime for a Kafka container (${(error as Error).message})`);
      this.skip();
    }
    // Kafka hands clients its advertised address, so the host port must be known before the container starts.
    const port = await unusedLoopbackPort();
    container = await new GenericContainer(KAFKA_IMAGE)
      .withExposedPorts({ container: 9092, host: port })
      .withEnvironment({
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: 'PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093',
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        KAFKA_NUM_PARTITIONS: '4',
        // Above the largest plan payload (10 MB), as ops/ configures production topics.
        KAFKA_MESSAGE_MAX_BYTES: String(16 * 1024 * 1024),
      })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .withStartupTimeout(180_000)
      .start();
    brokers = [`127.0.0.1:${port}`];
  });

  after(async function () {
    this.timeout(60_000);
    await container?.stop();
  });

  describeBrokerContract('kafka (container)', () =>
    connectKafkaBroker({
      brokers,
      clientId: 'broker-contract',
      maxWaitTimeInMs: 100,
      heartbeatIntervalMs: 300,
      sessionTimeoutMs: 6_000,
      errorBackoff: { initialMs: 50, maxMs: 500 },
    }),
  );
});
