import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Broker, BrokerRecord } from '../broker.js';
import { describeBrokerContract } from '../../testing/broker-contract.js';
import { BrokerRequestError, BrokerUnavailableError, MessageTooLargeError } from '../errors.js';
import { openEmbeddedBroker } from './embedded-broker.js';
import { isTrue, waitFor } from '../../testing/wait-for.js';

describe('embedded broker', function () {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-broker-contract-'));

  after(function () {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describeBrokerContract('embedded log', async () => openEmbeddedBroker({ dataDir, errorBackoff: { initialMs: 20, maxMs: 200 } }));

  describe('beyond the contract', function () {
    let ownDir: string;
    let broker: Broker;

    beforeEach(function () {
      ownDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-broker-embedded-'));
      broker = openEmbeddedBroker({ dataDir: ownDir });
    });

    afterEach(async function () {
      await broker.close();
      fs.rmSync(ownDir, { recursive: true, force: true });
    });

    it('refuses a second owner of the same log file while the first has it open', async function () {
      expect(() => openEmbeddedBroker({ dataDir: ownDir })).to.throw(BrokerUnavailableError, /in use by another process/);
      await broker.close();
      broker = openEmbeddedBroker({ dataDir: ownDir });
      expect(await broker.admin().listTopics()).to.deep.equal([]);
    });

    it('follows a matching topic as soon as it is created, without a refresh', async function () {
      const seen: BrokerRecord[] = [];
      const consumer = broker.consumer({
        groupId: 'deliverer',
        topicPattern: /^relay\.dst\./,
        fromBeginning: true,
        handleBatch: async (batch) => void seen.push(...batch.records),
      });
      await consumer.start();
      expect(consumer.assignment()).to.deep.equal([]);
      await broker.producer().send('relay.dst.dst_1', [{ key: 'src_1', value: Buffer.from('job') }]);
      await waitFor('the one record', () => seen.length === 1, isTrue, 5_000, 5);
      expect(consumer.assignment()).to.deep.equal([{ topic: 'relay.dst.dst_1', partitions: [0, 1, 2, 3] }]);
    });

    it('hands every partition to the remaining member when one member of the group stops', async function () {
      const seen: BrokerRecord[] = [];
      const handleBatch = async (batch: { records: BrokerRecord[] }) => void seen.push(...batch.records);
      const one = broker.consumer({ groupId: 'router', topics: ['relay.ingest'], handleBatch });
      const two = broker.consumer({ groupId: 'router', topics: ['relay.ingest'], handleBatch });
      await one.start();
      await two.start();
      expect(one.assignment()).to.deep.equal([{ topic: 'relay.ingest', partitions: [0, 2] }]);
      expect(two.assignment()).to.deep.equal([{ topic: 'relay.ingest', partitions: [1, 3] }]);
      await one.stop();
      expect(two.assignment()).to.deep.equal([{ topic: 'relay.ingest', partitions: [0, 1, 2, 3] }]);
      await broker.producer().send('relay.ingest', Array.from({ length: 20 }, (_, i) => ({ key: `src_${i}`, value: Buffer.from(`e${i}`) })));
      await waitFor('all 20 records', () => seen.length === 20, isTrue, 5_000, 5);
    });

    it("deals a group's partitions in the order of its members' ranks, whichever joined first", async function () {
      const handleBatch = async () => undefined;
      const second = broker.consumer({ groupId: 'router', topics: ['relay.ingest'], handleBatch, rank: 1 });
      const unranked = broker.consumer({ groupId: 'router', topics: ['relay.ingest'], handleBatch });
      const first = broker.consumer({ groupId: 'router', topics: ['relay.ingest'], handleBatch, rank: 0 });
      for (const consumer of [second, unranked, first]) await consumer.start();
      expect(first.assignment()).to.deep.equal([{ topic: 'relay.ingest', partitions: [0, 3] }]);
      expect(second.assignment()).to.deep.equal([{ topic: 'relay.ingest', partitions: [1] }]);
      expect(unranked.assignment()).to.deep.equal([{ topic: 'relay.ingest', partitions: [2] }]);
    });

    it('refuses a value above the size limit without failing the other sends of the same tick', async function () {
      await broker.close();
      broker = openEmbeddedBroker({ dataDir: ownDir, maxMessageBytes: 1024 });
      const producer = broker.producer();
      const [small, large] = await Promise.allSettled([
        producer.send('relay.ingest', [{ key: 'a', value: Buffer.alloc(1024) }]),
        producer.send('relay.ingest', [{ key: 'b', value: Buffer.alloc(1025) }]),
      ]);
      expect(small.status).to.equal('fulfilled');
      expect(large.status === 'rejected' && large.reason).to.be.instanceOf(MessageTooLargeError);
    });

    it('refuses a topic name Kafka would refuse', async function () {
      await expectRejection(broker.producer().send('relay dst/1', [{ key: null, value: Buffer.from('x') }]), BrokerRequestError);
      await expectRejection(broker.admin().ensureTopics([{ topic: '..', partitions: 1 }]), BrokerRequestError);
    });

    it('refuses to send once closed', async function () {
      await broker.close();
      await expectRejection(broker.producer().send('relay.ingest', [{ key: null, value: Buffer.from('x') }]), BrokerUnavailableError);
      broker = openEmbeddedBroker({ dataDir: ownDir });
    });
  });
});

async function expectRejection(promise: Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).to.be.instanceOf(type);
}
