import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { BatchOutcome, Broker, BrokerRecord, Consumer, ConsumerOptions, RecordBatch, TopicLag } from '../broker/broker.js';
import { partitionFor } from '../broker/partitioner.js';
import { isTrue, waitFor } from './wait-for.js';

/** How long a contract case waits for records (Kafka's group joins take seconds). */
const CONTRACT_WAIT_MS = 15_000;

/**
 * The behaviour every broker adapter must show, run against each backend by its spec file. `makeBroker`
 * opens a broker over the backend's shared storage: a second broker sees what the first one wrote.
 * Topics are created with 4 partitions, the count Kafka's auto-creation uses on the mock cluster.
 */
export function describeBrokerContract(name: string, makeBroker: () => Promise<Broker>): void {
  describe(`broker contract: ${name}`, function () {
    const PARTITIONS = 4;
    const opened: Broker[] = [];

    async function open(): Promise<Broker> {
      const broker = await makeBroker();
      opened.push(broker);
      return broker;
    }

    async function closeAll(): Promise<void> {
      await Promise.all(opened.splice(0).map((broker) => broker.close()));
    }

    async function freshTopic(broker: Broker, prefix = 'contract'): Promise<string> {
      const topic = uniqueName(prefix);
      await broker.admin().ensureTopics([{ topic, partitions: PARTITIONS }]);
      return topic;
    }

    afterEach(closeAll);

    it('delivers the records of one key in the order they were sent, on the partition the key hashes to', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const probe = new Probe(broker, { groupId: uniqueName('group'), topics: [topic], maxBatchSize: 7 });
      await probe.start();
      for (let round = 0; round < 10; round++) {
        await broker.producer().send(
          topic,
          ['alpha', 'beta', 'gamma'].flatMap((key) => [0, 1, 2].map((i) => message(key, `${key}:${round * 3 + i}`))),
        );
      }
      await waitFor('all 90 records', () => probe.records.length === 90, isTrue, CONTRACT_WAIT_MS, 10);
      for (const key of ['alpha', 'beta', 'gamma']) {
        const ofKey = probe.records.filter((record) => record.key === key);
        expect(ofKey.map((record) => record.value.toString())).to.deep.equal(range(30).map((i) => `${key}:${i}`));
        expect(new Set(ofKey.map((record) => record.partition))).to.deep.equal(new Set([partitionFor(key, PARTITIONS)]));
      }
      expect(probe.batches.every((batch) => batch.records.length <= 7)).to.equal(true);
    });

    it('round-trips keys, headers and binary values byte-exact', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const binary = Buffer.concat([Buffer.from([0, 255, 0, 10, 13]), randomBytes(4096)]);
      const headers = { 'content-type': 'application/octet-stream', 'x-unicode': 'héllo wörld ✓', 'x-empty': '' };
      const probe = new Probe(broker, { groupId: uniqueName('group'), topics: [topic] });
      await probe.start();
      await broker.producer().send(topic, [
        { key: 'src_bin', value: binary, headers },
        { key: null, value: Buffer.alloc(0) },
      ]);
      await waitFor('both records', () => probe.records.length === 2, isTrue, CONTRACT_WAIT_MS, 10);
      const withKey = probe.records.find((record) => record.key === 'src_bin')!;
      expect(withKey.value.equals(binary)).to.equal(true);
      expect(withKey.headers).to.deep.equal(headers);
      expect(withKey.timestamp).to.be.closeTo(Date.now(), 60_000);
      const keyless = probe.records.find((record) => record.key === null)!;
      expect(keyless.value.length).to.equal(0);
      expect(keyless.headers).to.deep.equal({});
    });

    it('round-trips a 10 MB value', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const value = randomBytes(10 * 1024 * 1024);
      const probe = new Probe(broker, { groupId: uniqueName('group'), topics: [topic] });
      await probe.start();
      await broker.producer().send(topic, [{ key: 'big', value }]);
      await waitFor('the large record', () => probe.records.length === 1, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.records[0]!.value.equals(value)).to.equal(true);
    });

    it('delivers a batch again while its handler throws, leaving it uncommitted until the handler succeeds', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const groupId = uniqueName('group');
      let failing = true;
      let calls = 0;
      const probe = new Probe(broker, { groupId, topics: [topic] }, () => {
        calls += 1;
        if (failing) throw new Error('store unavailable');
      });
      await probe.start();
      await broker.producer().send(topic, [message('k', 'only')]);
      await waitFor('a redelivery', () => calls >= 2, isTrue, CONTRACT_WAIT_MS, 10);
      expect(totalLag(await broker.admin().lag(groupId, [topic]))).to.equal(1);
      failing = false;
      await waitFor('the batch to be handled', () => probe.handled.length === 1, isTrue, CONTRACT_WAIT_MS, 10);
      expect(new Set(probe.records.map((record) => record.value.toString()))).to.deep.equal(new Set(['only']));
      await probe.consumer.stop();
      expect(totalLag(await broker.admin().lag(groupId, [topic]))).to.equal(0);
    });

    it('redelivers records whose handler never succeeded to the group after a restart', async function () {
      const crashing = await open();
      const topic = await freshTopic(crashing);
      const groupId = uniqueName('group');
      const failing = new Probe(crashing, { groupId, topics: [topic] }, () => {
        throw new Error('crashing handler');
      });
      await failing.start();
      await crashing.producer().send(topic, range(5).map((i) => message(`k${i}`, `m${i}`)));
      await waitFor('the failing consumer to see every record', () => failing.records.length >= 5, isTrue, CONTRACT_WAIT_MS, 10);
      await closeAll();

      const restarted = await open();
      const next = new Probe(restarted, { groupId, topics: [topic] });
      await next.start();
      await waitFor('redelivery after the restart', () => next.records.length >= 5, isTrue, CONTRACT_WAIT_MS, 10);
      expect(sortedValues(next.records)).to.deep.equal(['m0', 'm1', 'm2', 'm3', 'm4']);
    });

    it('resumes from the committed offsets after a restart, without replaying handled records', async function () {
      const topicBroker = await open();
      const topic = await freshTopic(topicBroker);
      const groupId = uniqueName('group');
      const first = new Probe(topicBroker, { groupId, topics: [topic] });
      await first.start();
      await topicBroker.producer().send(topic, range(5).map((i) => message(`k${i}`, `before${i}`)));
      await waitFor('the first five records', () => first.handled.length === 5, isTrue, CONTRACT_WAIT_MS, 10);
      await closeAll();

      const restarted = await open();
      await restarted.producer().send(topic, range(5).map((i) => message(`k${i}`, `after${i}`)));
      const second = new Probe(restarted, { groupId, topics: [topic] });
      await second.start();
      await waitFor('the five new records', () => second.handled.length === 5, isTrue, CONTRACT_WAIT_MS, 10);
      // A replayed record would come before a later one of its key: once these are in, nothing else is due.
      await restarted.producer().send(topic, range(5).map((i) => message(`k${i}`, `later${i}`)));
      await waitFor('the five later records', () => second.handled.length === 10, isTrue, CONTRACT_WAIT_MS, 10);
      expect(sortedValues(second.records)).to.deep.equal([...range(5).map((i) => `after${i}`), ...range(5).map((i) => `later${i}`)]);
    });

    it('holds a paused topic while other topics keep flowing, and delivers it after resume', async function () {
      const broker = await open();
      const held = await freshTopic(broker, 'held');
      const flowing = await freshTopic(broker, 'flowing');
      const probe = new Probe(broker, { groupId: uniqueName('group'), topics: [held, flowing] });
      await probe.start();
      probe.consumer.pause(held);
      await broker.producer().send(held, range(4).map((i) => message(`k${i}`, `held${i}`)));
      await broker.producer().send(flowing, range(4).map((i) => message(`k${i}`, `flowing${i}`)));
      await waitFor('the unpaused topic', () => probe.recordsOf(flowing).length === 4, isTrue, CONTRACT_WAIT_MS, 10);
      // Fetched after the held records were written: a held topic that was not held would be in by then.
      await broker.producer().send(flowing, range(4).map((i) => message(`k${i}`, `flowing-later${i}`)));
      await waitFor('the unpaused topic\'s later records', () => probe.recordsOf(flowing).length === 8, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.recordsOf(held)).to.have.length(0);
      probe.consumer.resume(held);
      await waitFor('the resumed topic', () => probe.recordsOf(held).length === 4, isTrue, CONTRACT_WAIT_MS, 10);
    });

    it('holds a paused partition while the topic\'s other partitions keep flowing', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const heldKey = keyFor(0, PARTITIONS);
      const flowingKey = keyFor(1, PARTITIONS);
      const probe = new Probe(broker, { groupId: uniqueName('group'), topics: [topic] });
      await probe.start();
      probe.consumer.pause(topic, [0]);
      await broker.producer().send(topic, [message(heldKey, 'held'), message(flowingKey, 'flowing')]);
      await waitFor('the unpaused partition', () => probe.records.some((record) => record.partition === 1), isTrue, CONTRACT_WAIT_MS, 10);
      // Fetched after the held record was written: a partition that was not held would be in by then.
      await broker.producer().send(topic, [message(flowingKey, 'flowing-later')]);
      await waitFor('the unpaused partition\'s later record', () => probe.records.filter((record) => record.partition === 1).length === 2, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.records.filter((record) => record.partition === 0)).to.have.length(0);
      probe.consumer.resume(topic, [0]);
      await waitFor('the resumed partition', () => probe.records.some((record) => record.partition === 0), isTrue, CONTRACT_WAIT_MS, 10);
    });

    it('commits the handled prefix of a batch and delivers the rest after the handler pauses and resumes', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const groupId = uniqueName('group');
      const key = keyFor(2, PARTITIONS);
      let paused = false;
      const probe = new Probe(broker, { groupId, topics: [topic] }, (batch): BatchOutcome | void => {
        if (paused || batch.records.length < 2) return undefined;
        paused = true;
        probe.consumer.pause(topic, [batch.partition]);
        return { handled: 2 };
      });
      await probe.start();
      await broker.producer().send(topic, range(5).map((i) => message(key, `m${i}`)));
      await waitFor('the pausing batch', () => paused, isTrue, CONTRACT_WAIT_MS, 10);
      await waitFor(
        'the handled prefix committed',
        async () => (await broker.admin().lag(groupId, [topic])).find((entry) => entry.partition === 2)?.lag,
        (lag) => lag === 3,
        CONTRACT_WAIT_MS,
        10,
      );
      expect(probe.handled.map((record) => record.value.toString())).to.deep.equal(['m0', 'm1']);
      probe.consumer.resume(topic, [2]);
      await waitFor('the rest after resume', () => probe.handled.length === 5, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.handled.map((record) => record.value.toString())).to.deep.equal(['m0', 'm1', 'm2', 'm3', 'm4']);
    });

    /**
     * A consumer on a new topic whose first batch leaves work running (`work`), with two records sent
     * to `partition` and handled; `committed` reads the group's commit there.
     */
    async function firstBatchLeavingWork(partition: number) {
      const broker = await open();
      const topic = await freshTopic(broker);
      const groupId = uniqueName('group');
      const key = keyFor(partition, PARTITIONS);
      const work = settleLater();
      let first = true;
      const probe = new Probe(broker, { groupId, topics: [topic] }, (batch): BatchOutcome | void => {
        if (!first) return undefined;
        first = false;
        return { handled: batch.records.length, completion: work.promise };
      });
      await probe.start();
      await broker.producer().send(topic, range(2).map((i) => message(key, `m${i}`)));
      await waitFor('the first batch', () => probe.handled.length === 2, isTrue, CONTRACT_WAIT_MS, 10);
      const committed = async () => (await broker.admin().lag(groupId, [topic])).find((item) => item.partition === partition)?.committed;
      const sendLater = (values: string[]) => broker.producer().send(topic, values.map((value) => message(key, value)));
      const handledValues = () => probe.handled.map((record) => record.value.toString());
      return { probe, work, committed, sendLater, handledValues };
    }

    it('reads a partition on while a handled batch\'s work goes on, and commits past it only once that work is complete', async function () {
      const { probe, work, committed, sendLater, handledValues } = await firstBatchLeavingWork(1);
      await sendLater(['n0', 'n1', 'n2']);
      await waitFor('the later records while the first batch\'s work goes on', () => probe.handled.length === 5, isTrue, CONTRACT_WAIT_MS, 10);
      expect(await committed()).to.equal('-1');
      work.resolve();
      await waitFor('the commit past every record', committed, (offset) => offset === '5', CONTRACT_WAIT_MS, 20);
      expect(handledValues()).to.deep.equal(['m0', 'm1', 'n0', 'n1', 'n2']);
    });

    it('reads a partition again from a handled batch whose work failed, the batches after it included', async function () {
      const { probe, work, committed, sendLater, handledValues } = await firstBatchLeavingWork(0);
      await sendLater(['n0']);
      await waitFor('the later record', () => probe.handled.length === 3, isTrue, CONTRACT_WAIT_MS, 10);
      work.reject(new Error('the work could not be finished'));
      await waitFor('every record read again', () => probe.handled.length === 6, isTrue, CONTRACT_WAIT_MS, 10);
      expect(handledValues()).to.deep.equal(['m0', 'm1', 'n0', 'm0', 'm1', 'n0']);
      await waitFor('the commit past every record', committed, (offset) => offset === '3', CONTRACT_WAIT_MS, 20);
    });

    it('commits the prefix a handler reports done while it still runs, and after it throws delivers the batch again from the first record not reported', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const groupId = uniqueName('group');
      const key = keyFor(3, PARTITIONS);
      const answers = settleLater();
      let first = true;
      let offered = true;
      const probe = new Probe(broker, { groupId, topics: [topic] }, async (batch) => {
        if (!first) return undefined;
        first = false;
        offered = batch.progress !== undefined;
        batch.progress?.(2);
        await answers.promise;
        throw new Error('the third record could not be finished');
      });
      await probe.start();
      await broker.producer().send(topic, range(4).map((i) => message(key, `m${i}`)));
      await waitFor('the first batch', () => probe.batches.length === 1, isTrue, CONTRACT_WAIT_MS, 10);
      // Kafka's commits wait for the handler: nothing to report to. The handler is let go first, so the
      // consumer can stop.
      if (!offered) {
        answers.resolve();
        console.log('      skipped: this adapter commits only once a handler has returned (Kafka), so a handler has no progress to report');
        return this.skip();
      }
      const committed = async () => (await broker.admin().lag(groupId, [topic])).find((entry) => entry.partition === 3)?.committed;
      await waitFor('the reported prefix committed while the handler runs', committed, (offset) => offset === '2', CONTRACT_WAIT_MS, 10);
      answers.resolve();
      await waitFor('the rest delivered again', () => probe.batches.length === 2, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.batches[1]!.records.map((record) => record.value.toString())).to.deep.equal(['m2', 'm3']);
      await waitFor('the commit past every record', committed, (offset) => offset === '4', CONTRACT_WAIT_MS, 10);
    });

    it('keeps delivering every other partition while one partition\'s handler is still busy', async function () {
      const broker = await open();
      const slow = await freshTopic(broker, 'slow');
      const other = await freshTopic(broker, 'other');
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const handled: BrokerRecord[] = [];
      let slowStarted = false;
      const consumer = broker.consumer({
        groupId: uniqueName('group'),
        topics: [slow, other],
        fromBeginning: true,
        concurrency: 2 * PARTITIONS,
        handleBatch: async (batch) => {
          if (batch.topic === slow) {
            // A destination whose requests hang until their timeout.
            slowStarted = true;
            await released;
          }
          handled.push(...batch.records);
        },
      });
      await consumer.start();
      try {
        await broker.producer().send(slow, [message('k', 'stuck')]);
        await waitFor('the slow handler to start', () => slowStarted, isTrue, CONTRACT_WAIT_MS, 10);
        // Sent only now, so that they cannot come in the same fetch as the slow record. Every partition of the other topic, so one of them shares whatever the slow one shares (a Kafka leader).
        await broker.producer().send(other, range(PARTITIONS).map((partition) => message(keyFor(partition, PARTITIONS), `p${partition}`)));
        await waitFor('every partition of the other topic', () => handled.filter((record) => record.topic === other).length === PARTITIONS, isTrue, CONTRACT_WAIT_MS, 10);
        expect(handled.filter((record) => record.topic === slow)).to.have.length(0);
      } finally {
        release();
      }
      await waitFor('the slow record once its handler is done', () => handled.some((record) => record.topic === slow), isTrue, CONTRACT_WAIT_MS, 10);
    });

    it('shares the partitions between two consumers of one group and hands each record to one of them', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const groupId = uniqueName('group');
      const one = new Probe(broker, { groupId, topics: [topic] });
      const two = new Probe(broker, { groupId, topics: [topic] });
      await Promise.all([one.start(), two.start()]);
      const ownPartitions = () => {
        const partitions = [one, two].map((probe) => probe.consumer.assignment().flatMap((entry) => entry.partitions));
        return partitions.every((list) => list.length > 0) && new Set(partitions.flat()).size === PARTITIONS;
      };
      await waitFor('both consumers to own partitions', ownPartitions, isTrue, CONTRACT_WAIT_MS, 10);
      await broker.producer().send(topic, range(100).map((i) => message(`key-${i}`, `m${i}`)));
      await waitFor('all records', () => one.handled.length + two.handled.length >= 100, isTrue, CONTRACT_WAIT_MS, 10);
      // A record handed out twice would come again before a later one of its partition: once one per
      // partition is in, nothing else is due.
      await broker.producer().send(topic, range(PARTITIONS).map((partition) => message(keyFor(partition, PARTITIONS), `later${partition}`)));
      await waitFor('a later record on every partition', () => one.handled.length + two.handled.length >= 100 + PARTITIONS, isTrue, CONTRACT_WAIT_MS, 10);
      const all = [...one.records, ...two.records].filter((record) => !record.value.toString().startsWith('later'));
      expect(all).to.have.length(100);
      expect(new Set(all.map((record) => record.value.toString())).size).to.equal(100);
      expect(one.records.length).to.be.greaterThan(0);
      expect(two.records.length).to.be.greaterThan(0);
      const ownedByOne = new Set(one.records.map((record) => record.partition));
      expect(two.records.some((record) => ownedByOne.has(record.partition))).to.equal(false);
    });

    it('follows a topic pattern to a topic created later once the subscription is refreshed', async function () {
      const broker = await open();
      const prefix = uniqueName('dst');
      const first = `${prefix}.first`;
      await broker.admin().ensureTopics([{ topic: first, partitions: PARTITIONS }]);
      const probe = new Probe(broker, {
        groupId: uniqueName('group'),
        topicPattern: new RegExp(`^${prefix.replace(/[.-]/g, '\\$&')}\\.`),
      });
      await probe.start();
      await broker.producer().send(first, [message('k', 'to-first')]);
      await waitFor('the existing topic', () => probe.records.length === 1, isTrue, CONTRACT_WAIT_MS, 10);

      const later = `${prefix}.later`;
      await broker.admin().ensureTopics([{ topic: later, partitions: PARTITIONS }]);
      await probe.consumer.refreshSubscription();
      await broker.producer().send(later, [message('k', 'to-later')]);
      await waitFor('the topic created later', () => probe.recordsOf(later).length === 1, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.consumer.assignment().map((entry) => entry.topic)).to.include(later);
    });

    it('reads, for a group of new records only, every record sent once its start resolved, and none sent before', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      await broker.producer().send(topic, [message('alpha', 'before')]);
      const probe = new Probe(broker, { groupId: uniqueName('group'), topics: [topic], fromBeginning: false });
      await probe.start();
      // At once: a Kafka member asks where a partition ends at its first fetch, which may come after this.
      await broker.producer().send(topic, [message('alpha', 'after')]);
      await waitFor('the record sent after the start', () => probe.records.length > 0, isTrue, CONTRACT_WAIT_MS, 10);
      expect(probe.records.map((record) => record.value.toString())).to.deep.equal(['after']);
    });

    it('reports the lag of a group per partition', async function () {
      const broker = await open();
      const topic = await freshTopic(broker);
      const groupId = uniqueName('group');
      const key = keyFor(3, PARTITIONS);
      const probe = new Probe(broker, { groupId, topics: [topic] });
      await probe.start();
      await broker.producer().send(topic, range(4).map((i) => message(key, `m${i}`)));
      await waitFor('the first records', () => probe.handled.length === 4, isTrue, CONTRACT_WAIT_MS, 10);
      // Their commit is waited for before the stop: the subject here is the lag, and a stop's last commit may
      // be given up on (three tries, then at least once), as once in CI, which left the partition uncommitted.
      const committedOf = async () => (await broker.admin().lag(groupId, [topic])).find((item) => item.partition === 3)?.committed;
      await waitFor('the commit of the first records', committedOf, (committed) => committed === '4', CONTRACT_WAIT_MS, 20);
      await probe.consumer.stop();
      await broker.producer().send(topic, range(6).map((i) => message(key, `n${i}`)));

      const lag = await broker.admin().lag(groupId);
      const entry = lag.find((item) => item.topic === topic && item.partition === 3)!;
      expect(entry).to.include({ groupId, committed: '4', end: '10', lag: 6 });
      expect(lag.filter((item) => item.topic === topic)).to.have.length(PARTITIONS);
      expect(await broker.admin().listTopics()).to.include(topic);
    });
  });
}

type Reaction = (batch: RecordBatch) => BatchOutcome | void | Promise<BatchOutcome | void>;

/** A consumer that remembers every record it was given and every record it handled. */
class Probe {
  readonly consumer: Consumer;
  readonly batches: RecordBatch[] = [];
  readonly records: BrokerRecord[] = [];
  readonly handled: BrokerRecord[] = [];

  constructor(broker: Broker, options: Omit<ConsumerOptions, 'handleBatch'>, react: Reaction = () => undefined) {
    this.consumer = broker.consumer({
      fromBeginning: true,
      ...options,
      handleBatch: async (batch) => {
        this.batches.push(batch);
        this.records.push(...batch.records);
        const outcome = await react(batch);
        this.handled.push(...batch.records.slice(0, outcome ? outcome.handled : batch.records.length));
        return outcome;
      },
    });
  }

  start(): Promise<void> {
    return this.consumer.start();
  }

  recordsOf(topic: string): BrokerRecord[] {
    return this.records.filter((record) => record.topic === topic);
  }
}

/** A promise settled by the test, as a handler's work that is answered later. */
function settleLater() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((ok, fail) => ((resolve = ok), (reject = fail)));
  // Observed by the consumer later; a rejection before that is not unhandled.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

let nameCounter = 0;

function uniqueName(prefix: string): string {
  nameCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${nameCounter}-${randomBytes(3).toString('hex')}`;
}

function message(key: string, value: string) {
  return { key, value: Buffer.from(value) };
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

function totalLag(lags: TopicLag[]): number {
  return lags.reduce((sum, entry) => sum + entry.lag, 0);
}

function sortedValues(records: BrokerRecord[]): string[] {
  return records.map((record) => record.value.toString()).sort();
}

/** A key that the default partitioner sends to `partition`. */
function keyFor(partition: number, partitions: number): string {
  for (let i = 0; ; i++) if (partitionFor(`key-${i}`, partitions) === partition) return `key-${i}`;
}
