import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Broker, BrokerRecord, Consumer } from '../../libs/broker/broker.js';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import { Collected } from '../../libs/testing/deliverer-harness.js';
import { PauseHolds } from './pause-holds.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PauseHolds', function () {
  let dataDir: string;
  let broker: Broker;
  let consumer: Consumer;
  let received: Collected<BrokerRecord>;
  let holds: PauseHolds;
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
    holds = new PauseHolds(consumer);
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
    await sleep(120);
    expect(received.items, 'the rate limit timer must not undo the open circuit').to.have.length(0);

    holds.release({ topic }, 'circuit_open');
    await received.waitFor(1, () => true, 1000);
  });

  it('releases a timed hold by itself, and a later hold for the same reason replaces the timer', async function () {
    holds.hold({ topic }, 'rate_limited', 30);
    holds.hold({ topic }, 'rate_limited', 200);
    await publish('a');
    await sleep(120);
    expect(received.items).to.have.length(0);
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
    await sleep(100);
    expect(received.items).to.have.length(keys.length + flowed.length);

    holds.release({ topic, partition: held }, 'not_due');
    await received.waitFor(keys.length * 2, () => true, 1000);
  });
});
