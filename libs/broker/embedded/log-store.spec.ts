import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { LogStore, type PendingAppend, type StoredTopic } from './log-store.js';
import { TAIL_LIMITS } from './partition-tail.js';

describe('embedded log store reads', function () {
  let dataDir: string;
  let file: string;
  let store: LogStore;
  let topic: StoredTopic;

  beforeEach(function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-log-store-'));
    file = path.join(dataDir, 'broker.sqlite');
    store = LogStore.open(file, 'normal');
    topic = store.createTopic('relay.ingest', 2);
  });

  afterEach(function () {
    store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const record = (index: number, partition = 0): PendingAppend => ({
    topic,
    partition,
    key: `k${index}`,
    headers: index % 2 === 0 ? { traceparent: `t${index}` } : {},
    value: Buffer.from(`value ${index}`),
    timestamp: 1_000 + index,
  });

  /** What the file alone answers: the store opened again has read nothing into memory. */
  function readFromFile(from: number, maxRecords: number, maxBytes = Infinity) {
    store.close();
    store = LogStore.open(file, 'normal');
    topic = store.topic('relay.ingest')!;
    return store.read(topic, 0, from, maxRecords, maxBytes);
  }

  it('answers a read right behind the appends with what the file holds', function () {
    store.write([0, 1, 2, 3].map((index) => record(index)), []);
    store.write([record(4, 1)], []);
    const read = [store.read(topic, 0, 1, 2, Infinity), store.read(topic, 0, 0, 10, 14)];
    expect(read[0]!.map((r) => r.offset)).to.deep.equal(['1', '2']);
    expect(read).to.deep.equal([readFromFile(1, 2), readFromFile(0, 10, 14)]);
  });

  it('gives each read headers of its own', function () {
    store.write([record(0)], []);
    store.read(topic, 0, 0, 1, Infinity)[0]!.headers.traceparent = 'changed';
    expect(store.read(topic, 0, 0, 1, Infinity)[0]!.headers).to.deep.equal({ traceparent: 't0' });
  });

  it('reads from the file the records that no longer fit in memory', function () {
    const count = TAIL_LIMITS.records + 10;
    store.write(Array.from({ length: count }, (_, index) => record(index)), []);
    const read = store.read(topic, 0, 0, count, Infinity);
    expect(read.map((r) => Number(r.offset))).to.deep.equal(Array.from({ length: count }, (_, index) => index));
    expect(read).to.deep.equal(readFromFile(0, count));
  });

  it('reads nothing of a write that rolled back, and gives its offsets to the next', function () {
    const unwritable = { ...record(1), value: null as unknown as Buffer };
    expect(() => store.write([record(0), unwritable], [])).to.throw();
    expect(store.read(topic, 0, 0, 10, Infinity)).to.deep.equal([]);
    store.write([record(2)], []);
    expect(store.read(topic, 0, 0, 10, Infinity).map((r) => [r.offset, r.key])).to.deep.equal([['0', 'k2']]);
  });

  it('reads nothing that retention deleted', function () {
    store.write([0, 1, 2, 3, 4].map((index) => record(index)), []);
    store.deleteRange(topic, 0, 0, 3);
    expect(store.read(topic, 0, 0, 10, Infinity).map((r) => r.offset)).to.deep.equal(['3', '4']);
  });
});
