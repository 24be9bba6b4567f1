import { expect } from 'chai';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { ConsumerOptions, RecordBatch } from '../broker.js';
import { partitionFor } from '../partitioner.js';
import { silentLogger } from '../silent-logger.js';
import { countingKafka } from '../../testing/counting-kafka.js';
import { kafkaClusterFor, type KafkaTestCluster } from '../../testing/kafka-target.js';
import { KafkaAdmin } from './kafka-admin.js';
import { KafkaConsumer } from './kafka-consumer.js';
import { waitFor } from '../../testing/wait-for.js';
import { KafkaProducer } from './kafka-producer.js';
import { topicPrefix } from './topic-prefix.js';

/** Auto-created topics have 4 partitions, on the mock cluster and on `npm run kafka:up`'s (num.partitions). */
const PARTITIONS = 4;

describe('KafkaConsumer on a Kafka cluster', function () {
  this.timeout(30_000);
  let cluster: KafkaTestCluster | undefined;

  before(async function () {
    cluster = await kafkaClusterFor(this);
  });

  after(async function () {
    await cluster?.cleanup();
  });

  /** A group member on `kafka`, as the broker makes them, with the contract suite's timings. */
  function consumerOf(kafka: Kafka, admin: Admin, options: ConsumerOptions, commitIntervalMs = 100): KafkaConsumer {
    return new KafkaConsumer(
      {
        kafka,
        logger: silentLogger,
        settings: { ...cluster!.consumer, errorBackoff: { initialMs: 50, maxMs: 500 }, commitIntervalMs },
        listTopics: () => admin.listTopics(),
        // The spec names topics and groups with the suite's prefix itself, for its plain kafkajs calls.
        names: topicPrefix(),
        endsWhereUncommitted: (groupId, topics) => new KafkaAdmin(admin, silentLogger).endsWhereUncommitted(groupId, topics),
        track: () => undefined,
        forget: () => undefined,
      },
      { fromBeginning: true, ...options },
    );
  }

  it('commits the batches of several partitions handled at the same time in one OffsetCommit request', async () => {
    const kafka = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING });
    const topic = `${cluster!.prefix}spec.commits.${Date.now()}`;
    // A record on every partition, written before the group starts: its first fetches hold all four.
    const keys = [...new Map(Array.from({ length: 64 }, (_, i) => `key-${i}`).map((key) => [partitionFor(key, PARTITIONS), key])).values()];
    expect(keys).to.have.length(PARTITIONS);
    const producer = new KafkaProducer(kafka, { idempotent: false, requestTimeoutMs: 5_000, maxRequestBytes: 1024 * 1024 }, silentLogger);
    await producer.send(topic, keys.map((key) => ({ key, value: Buffer.from(key) })));
    await producer.close();

    // Each handler waits until every partition's batch is in hand, so all four finish in the same turn.
    const handled: RecordBatch[] = [];
    let allInHand!: () => void;
    const inHand = new Promise<void>((resolve) => (allInHand = resolve));
    const counting = countingKafka(kafka);
    const admin = kafka.admin();
    await admin.connect();
    const consumer = consumerOf(counting.kafka, admin, {
      groupId: `${cluster!.prefix}spec-commits-${Date.now()}`,
      topics: [topic],
      concurrency: PARTITIONS,
      async handleBatch(batch) {
        handled.push(batch);
        if (new Set(handled.map((each) => each.partition)).size === PARTITIONS) allInHand();
        await inHand;
      },
    });
    try {
      await consumer.start();
      await inHand;
    } finally {
      // Stopping lets the handled batches commit first.
      await consumer.stop();
      await admin.disconnect();
    }
    expect(handled.map((batch) => batch.records.length)).to.deep.equal([1, 1, 1, 1]);
    expect(counting.requests('OffsetCommit')).to.equal(1);
  });

  it('lets a batch that is in hand when the stop comes commit before it leaves the group', async () => {
    const kafka = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING });
    const topic = `${cluster!.prefix}spec.stop.${Date.now()}`;
    const producer = new KafkaProducer(kafka, { idempotent: false, requestTimeoutMs: 5_000, maxRequestBytes: 1024 * 1024 }, silentLogger);
    await producer.send(topic, [{ key: 'only', value: Buffer.from('only') }]);
    await producer.close();
    let taken!: () => void;
    const inHand = new Promise<void>((resolve) => (taken = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const admin = kafka.admin();
    await admin.connect();
    const groupId = `${cluster!.prefix}spec-stop-${Date.now()}`;
    const consumer = consumerOf(kafka, admin, {
      groupId,
      topics: [topic],
      async handleBatch() {
        taken();
        await finished;
      },
    });
    try {
      await consumer.start();
      await inHand;
      const stopped = consumer.stop();
      // The batch ends a turn after the stop began, kafkajs' own stop under way.
      setImmediate(finish);
      await stopped;
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      expect(committed!.partitions.find((entry) => entry.partition === partitionFor('only', PARTITIONS))?.offset).to.equal('1');
    } finally {
      await admin.disconnect();
    }
  });

  /** `count` records of one key, values counting from 0, written before the group starts in produce requests of `perRequest`. */
  async function recordsOfOneKey(kafka: Kafka, topic: string, count: number, perRequest = count): Promise<void> {
    const producer = new KafkaProducer(kafka, { idempotent: false, requestTimeoutMs: 5_000, maxRequestBytes: 1024 * 1024 }, silentLogger);
    for (let first = 0; first < count; first += perRequest) {
      const values = Array.from({ length: Math.min(perRequest, count - first) }, (_, i) => String(first + i));
      await producer.send(topic, values.map((value) => ({ key: 'one', value: Buffer.from(value) })));
    }
    await producer.close();
  }

  it('commits what a member handles within the commit interval in one OffsetCommit request', async () => {
    const kafka = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING });
    const topic = `${cluster!.prefix}spec.interval.${Date.now()}`;
    await recordsOfOneKey(kafka, topic, 5);
    const counting = countingKafka(kafka);
    const admin = kafka.admin();
    await admin.connect();
    const groupId = `${cluster!.prefix}spec-interval-${Date.now()}`;
    let handled = 0;
    // One record per chunk: five handled prefixes, each of which used to be committed on its own.
    const consumer = consumerOf(counting.kafka, admin, { groupId, topics: [topic], maxBatchSize: 1, handleBatch: async () => void (handled += 1) }, 60_000);
    try {
      await consumer.start();
      await waitFor('five records handled', () => handled, (count) => count === 5);
    } finally {
      await consumer.stop();
    }
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    await admin.disconnect();
    expect(committed!.partitions.find((entry) => entry.partition === partitionFor('one', PARTITIONS))?.offset).to.equal('5');
    expect(counting.requests('OffsetCommit')).to.equal(1);
  });

  it('commits what a running member handled once the commit interval has passed', async () => {
    const kafka = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING });
    const topic = `${cluster!.prefix}spec.running.${Date.now()}`;
    await recordsOfOneKey(kafka, topic, 3);
    const admin = kafka.admin();
    await admin.connect();
    const groupId = `${cluster!.prefix}spec-running-${Date.now()}`;
    const consumer = consumerOf(kafka, admin, { groupId, topics: [topic], handleBatch: async () => undefined });
    try {
      await consumer.start();
      await waitFor(
        'the three records committed',
        async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.find((entry) => entry.partition === partitionFor('one', PARTITIONS))?.offset,
        (offset) => offset === '3',
      );
    } finally {
      await consumer.stop();
      await admin.disconnect();
    }
  });

  // The mock cluster answers a fetch with one produced batch a partition, where Kafka answers with up to
  // maxBytesPerPartition: a partition behind is still handled in batches of up to maxBatchSize.
  it('handles a partition behind its end in batches of up to maxBatchSize, however small the batches it was produced in', async () => {
    const kafka = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING });
    const topic = `${cluster!.prefix}spec.gather.${Date.now()}`;
    await recordsOfOneKey(kafka, topic, 60, 3);
    const admin = kafka.admin();
    await admin.connect();
    const sizes: number[] = [];
    const values: string[] = [];
    const consumer = consumerOf(kafka, admin, {
      groupId: `${cluster!.prefix}spec-gather-${Date.now()}`,
      topics: [topic],
      maxBatchSize: 25,
      async handleBatch(batch) {
        sizes.push(batch.records.length);
        values.push(...batch.records.map((record) => record.value.toString()));
      },
    });
    try {
      await consumer.start();
      await waitFor('the 60 records handled', () => values.length, (count) => count >= 60);
    } finally {
      await consumer.stop();
      await admin.disconnect();
    }
    expect(values).to.deep.equal(Array.from({ length: 60 }, (_, i) => String(i)));
    expect(Math.max(...sizes)).to.equal(25);
    expect(sizes.length).to.be.at.most(5);
  });

  it('fetches records it held again after a pause that left them unhandled, none skipped', async () => {
    const kafka = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING });
    const topic = `${cluster!.prefix}spec.gather-pause.${Date.now()}`;
    await recordsOfOneKey(kafka, topic, 30, 3);
    const admin = kafka.admin();
    await admin.connect();
    const groupId = `${cluster!.prefix}spec-gather-pause-${Date.now()}`;
    const values: string[] = [];
    let paused = false;
    const partition = partitionFor('one', PARTITIONS);
    const consumer: KafkaConsumer = consumerOf(kafka, admin, {
      groupId,
      topics: [topic],
      maxBatchSize: 12,
      async handleBatch(batch) {
        // The first batch gathered from several produced ones: none taken, the partition held instead, as a
        // deliverer holds a destination, and let go a moment later.
        if (!paused && batch.records.length > 3) {
          paused = true;
          consumer.pause(topic, [partition]);
          setTimeout(() => consumer.resume(topic, [partition]), 300);
          return { handled: 0 };
        }
        values.push(...batch.records.map((record) => record.value.toString()));
      },
    });
    try {
      await consumer.start();
      await waitFor(
        'the 30 records committed',
        async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.find((entry) => entry.partition === partition)?.offset,
        (offset) => offset === '30',
      );
    } finally {
      await consumer.stop();
      await admin.disconnect();
    }
    expect(paused).to.equal(true);
    expect(values).to.deep.equal(Array.from({ length: 30 }, (_, i) => String(i)));
  });
});
