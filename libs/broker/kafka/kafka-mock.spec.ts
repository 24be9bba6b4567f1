import { describeBrokerContract } from '../../testing/broker-contract.js';
import { kcatAvailable, startKafkaMock, type KafkaMockCluster } from '../../testing/kafka-mock.js';
import { connectKafkaBroker } from './kafka-broker.js';

describe('kafka broker on the librdkafka mock cluster', function () {
  let cluster: KafkaMockCluster | undefined;

  before(async function () {
    if (!kcatAvailable()) {
      if (process.env.CI === 'true') throw new Error('kcat is required in CI for the Kafka mock cluster (apt-get install -y kcat)');
      console.log('    skipped: kcat is not installed (apt-get install -y kcat), so there is no Kafka mock cluster');
      this.skip();
    }
    cluster = await startKafkaMock();
  });

  after(async function () {
    await cluster?.stop();
  });

  describeBrokerContract('kafka (mock cluster)', () =>
    connectKafkaBroker({
      brokers: cluster!.brokers,
      clientId: 'broker-contract',
      maxWaitTimeInMs: 100,
      // The mock holds a group's first join for 3 s (members must outlive that without heartbeats) and a
      // rejoin after the last member left for sessionTimeout - 1 s.
      heartbeatIntervalMs: 300,
      sessionTimeoutMs: 4_500,
      rebalanceTimeoutMs: 4_500,
      errorBackoff: { initialMs: 50, maxMs: 500 },
    }),
  );
});
