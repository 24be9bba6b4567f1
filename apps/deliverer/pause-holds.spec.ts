import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Broker, BrokerRecord, Consumer } from '../../libs/broker/broker.js';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import { Collected } from '../../testing/deliverer-harness.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { PauseHolds } from './pause-holds.js';

describe('PauseHolds', function () {
  let dataDir: string;
  let broker: Broker;
  let consumer: Consumer;
  let received: Collected<BrokerRecord>;
  let holds: PauseHolds;
  let timers: ManualTimers;
  /** What the holds asked of the consumer last, per topic or partition: paused or not. */
  let paused: Map<string, boolean>;
  const topic = 'relay.dst.holds';

  beforeEach(async function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-holds-'));
    broker = openEmbeddedBroker({ dataDir });
    await broker.admin().ensureTopics([{ topic, partitions: 2 }]);
    received = new Collected();
    consumer = broker.consumer({
      groupId: 'holds',
      topics: [topic],
      fromBeginning: true,
      concurrency: 2,
      handleBatch: async (batch) => batch.records.forEach((record) => received.add(record)),
    });
    timers = new ManualTimers();
    paused = new Map();
    const observed: Pick<Consumer, 'pause' | 'resume'> = {
      pause: (name, partitions) => (paused.set(`${name}${partitions ?? ''}`, true), consumer.pause(name, partitions)),
      resume: (name, partitions) => (paused.set(`${name}${partitions ?? ''}`, false), consumer.resume(name, partitions)),
    };
    holds = new PauseHolds(observed, timers.schedule);
    await consumer.start();
  });

  afterEach(async function () {
    holds.clear();
    await broker.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const publish = (key: string) => broker.producer().send(topic, [{ key, value: Buffer.from(key) }]);

  it('keeps a topic paused until the last reason is released, whatever the order and the timers', async function () {
    holds.hold({ topic }, 'circuit_open');
    holds.hold({ topic }, 'rate_limited', 30);
    await publish('a');
    timers.advance(30);
    expect(holds.heldFor('rate_limited')).to.be.empty;
    expect(paused.get(topic), 'the rate limit timer must not undo the open circuit').to.equal(true);

    holds.release({ topic }, 'circuit_open');
    await received.waitFor(1, () => true, 1000);
  });

  it('releases a timed hold by itself, and a later hold for the same reason replaces the timer', async function () {
    holds.hold({ topic }, 'rate_limited', 30);
    holds.hold({ topic }, 'rate_limited', 200);
    await publish('a');
    timers.advance(199);
    expect(paused.get(topic), 'held past the replaced timer').to.equal(true);
    timers.advance(1);
    expect(paused.get(topic)).to.equal(false);
    await received.waitFor(1, () => true, 1000);
  });

  it('holds one partition while the others flow', async function () {
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
    for (const key of keys) await publish(key);
    await received.waitFor(keys.length, () => true, 1000);
    const partitionOf = new Map(received.items.map((record) => [record.key, record.partition]));
    const held = received.items[0]!.partition;

    holds.hold({ topic, partition: held }, 'not_due');
    for (const key of keys) await publish(key);
    const flowed = keys.filter((key) => partitionOf.get(key) !== held);
    expect(flowed, 'some keys hash to the other partition').not.to.be.empty;
    await received.waitFor(keys.length + flowed.length, () => true, 1000);
    expect(received.items.slice(keys.length).map((record) => record.partition)).not.to.include(held);
    expect(paused.get(`${topic}${held}`)).to.equal(true);

    holds.release({ topic, partition: held }, 'not_due');
    await received.waitFor(keys.length * 2, () => true, 1000);
  });
});
