import { describeBrokerContract } from '../../testing/broker-contract.js';
import { startKafkaMockOrSkip, type KafkaMockCluster } from '../../testing/kafka-mock.js';
import { connectKafkaBroker } from './kafka-broker.js';

describe('kafka broker on the librdkafka mock cluster', function () {
  let cluster: KafkaMockCluster | undefined;

  before(async function () {
    cluster = await startKafkaMockOrSkip(this);
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
