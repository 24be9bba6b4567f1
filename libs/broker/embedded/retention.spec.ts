import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { silentLogger } from '../silent-logger.js';
import { LogStore, type StoredTopic } from './log-store.js';
import { Retention, type RetentionOptions } from './retention.js';

describe('embedded log retention', function () {
  const HOUR = 60 * 60 * 1000;
  let dataDir: string;
  let store: LogStore;
  let topic: StoredTopic;
  let activeGroups: string[];

  beforeEach(function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-retention-'));
    store = LogStore.open(path.join(dataDir, 'broker.sqlite'), 'normal');
    topic = store.createTopic('relay.ingest', 2);
    activeGroups = [];
  });

  afterEach(function () {
    store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function append(partition: number, count: number, ageMs: number, bytes = 16): void {
    const timestamp = Date.now() - ageMs;
    store.write(
      Array.from({ length: count }, () => ({ topic, partition, key: 'k', headers: {}, value: Buffer.alloc(bytes, 1), timestamp })),
      [],
    );
  }

  function commit(groupId: string, partition: number, offset: number): void {
    store.write([], [{ groupId, topic, partition, offset }]);
  }

  function retention(options: Partial<RetentionOptions>, now?: () => number): Retention {
    return new Retention(
      store,
      { maxAgeMs: HOUR, maxBytes: 1024 ** 3, groupExpiryMs: 24 * HOUR, intervalMs: 60_000, ...options },
      silentLogger,
      () => activeGroups,
      now,
    );
  }

  it('deletes consumed records older than the retention age and keeps the newer and the unconsumed ones', async function () {
    append(0, 10, 2 * HOUR);
    append(0, 5, 0);
    commit('router', 0, 12);

    expect(await retention({}).run()).to.equal(10);
    expect(store.lowOffset(topic, 0)).to.equal(10);
    expect(store.read(topic, 0, 0, 100, Infinity)).to.have.length(5);
  });

  it('keeps records that one of the groups has not consumed yet', async function () {
    append(0, 10, 2 * HOUR);
    commit('router', 0, 10);
    commit('recorder', 0, 4);

    expect(await retention({}).run()).to.equal(4);
    expect(store.lowOffset(topic, 0)).to.equal(4);
  });

  it('stops honouring a group that has not committed within the group expiry, unless it has a member here', async function () {
    append(0, 10, 2 * HOUR);
    commit('router', 0, 10);
    commit('config-of-a-past-process', 0, 2);
    // A millisecond on, both groups' commits are older than an expiry of 0.
    const later = () => Date.now() + 1;

    activeGroups = ['router', 'config-of-a-past-process'];
    expect(await retention({ groupExpiryMs: 0 }, later).run()).to.equal(2);
    activeGroups = ['router'];
    expect(await retention({ groupExpiryMs: 0 }, later).run()).to.equal(8);
  });

  it('never deletes from a partition no group has committed on', async function () {
    append(1, 10, 2 * HOUR);
    commit('router', 0, 0);

    expect(await retention({ maxAgeMs: 0 }).run()).to.equal(0);
    expect(store.lowOffset(topic, 1)).to.equal(0);
  });

  it('deletes consumed records regardless of age while the file is over its size bound', async function () {
    append(0, 40, 0, 64 * 1024);
    append(0, 10, 0, 64 * 1024);
    commit('router', 0, 40);
    const before = store.usedBytes();

    expect(await retention({ maxBytes: before / 2 }).run()).to.be.within(20, 40);
    expect(store.usedBytes()).to.be.at.most(before / 2);
    expect(store.lowOffset(topic, 0)).to.be.at.most(40);
    expect(store.read(topic, 0, 40, 100, Infinity)).to.have.length(10);
  });

  it('keeps numbering a partition where it left off after retention emptied it and the log was reopened', async function () {
    append(0, 3, 2 * HOUR);
    commit('router', 0, 3);
    await retention({}).run();
    expect(store.lowOffset(topic, 0)).to.equal(undefined);
    store.close();

    store = LogStore.open(path.join(dataDir, 'broker.sqlite'), 'normal');
    topic = store.topic('relay.ingest')!;
    append(0, 1, 0);
    expect(store.read(topic, 0, 0, 10, Infinity).map((record) => record.offset)).to.deep.equal(['3']);
  });
});
