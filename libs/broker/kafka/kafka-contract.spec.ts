import { expect } from 'chai';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import type { BrokerRecord } from '../broker.js';
import { describeBrokerContract } from '../../testing/broker-contract.js';
import { waitFor } from '../../testing/wait-for.js';
import { kafkaClusterFor, type KafkaTestCluster } from '../../testing/kafka-target.js';
import { connectKafkaBroker } from './kafka-broker.js';

// On the cluster `npm run kafka:up` started (KAFKA_VERSION picks 4.x or 3.9.x; CI runs both), else locally
// on the librdkafka mock.

describe('kafka broker on a Kafka cluster', function () {
  let cluster: KafkaTestCluster | undefined;

  before(async function () {
    cluster = await kafkaClusterFor(this);
    console.log(`      on ${cluster.kind === 'real' ? `Kafka at ${cluster.brokers.join(',')}` : 'the librdkafka mock cluster'}`);
  });

  after(async function () {
    this.timeout(30_000);
    await cluster?.cleanup();
  });

  describeBrokerContract('kafka', () =>
    connectKafkaBroker({
      brokers: cluster!.brokers,
      clientId: 'broker-contract',
      topicPrefix: cluster!.prefix,
      ...cluster!.consumer,
      errorBackoff: { initialMs: 50, maxMs: 500 },
    }),
  );

  it('keeps two relays with different topic prefixes apart on one cluster, each using its own names', async function () {
    this.timeout(60_000);
    const open = (prefix: string) =>
      connectKafkaBroker({ brokers: cluster!.brokers, clientId: 'prefix-spec', topicPrefix: prefix, ...cluster!.consumer, errorBackoff: { initialMs: 50, maxMs: 500 } });
    const [first, second] = await Promise.all([open(`${cluster!.prefix}a.`), open(`${cluster!.prefix}b.`)]);
    try {
      await Promise.all([first, second].map((broker) => broker.admin().ensureTopics([{ topic: 'relay.ingest', partitions: 2 }])));
      const seen: BrokerRecord[] = [];
      const consumer = first.consumer({ groupId: 'relay-router', topics: ['relay.ingest'], fromBeginning: true, handleBatch: async (batch) => void seen.push(...batch.records) });
      await consumer.start();
      await second.producer().send('relay.ingest', [{ key: 'k', value: Buffer.from('second') }]);
      await first.producer().send('relay.ingest', [{ key: 'k', value: Buffer.from('first') }]);
      await waitFor('the first relay\'s record', () => seen.length, (count) => count >= 1);
      expect(await first.admin().listTopics()).to.deep.equal(['relay.ingest']);
      expect(seen.map((record) => [record.topic, record.value.toString()])).to.deep.equal([['relay.ingest', 'first']]);
      expect(consumer.assignment().map((entry) => entry.topic)).to.deep.equal(['relay.ingest']);
      expect((await first.admin().lag('relay-router', ['relay.ingest'])).map((entry) => entry.topic)).to.deep.equal(['relay.ingest', 'relay.ingest']);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('creates the relay\'s topics with 3 replicas and min.insync.replicas=2 on a cluster of 3 brokers', async function () {
    if (cluster!.kind === 'mock') {
      console.log('      skipped: the librdkafka mock refuses CreateTopics (topics are auto-created there)');
      this.skip();
    }
    const broker = await connectKafkaBroker({ brokers: cluster!.brokers, topicPrefix: cluster!.prefix, ...cluster!.consumer });
    const admin = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING }).admin();
    try {
      await broker.admin().ensureTopics([{ topic: 'relay.durable', partitions: 2 }]);
      await admin.connect();
      const topic = `${cluster!.prefix}relay.durable`;
      // ensureTopics returns once every broker knows the topic: any of them may answer these at once.
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(topics[0]!.partitions.map((partition) => partition.replicas.length)).to.deep.equal([3, 3]);
      const { resources } = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] }], includeSynonyms: false });
      expect(resources[0]!.configEntries.find((entry) => entry.configName === 'min.insync.replicas')?.configValue).to.equal('2');
    } finally {
      await admin.disconnect();
      await broker.close();
    }
  });
});
