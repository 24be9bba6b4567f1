import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { unusedLoopbackPort } from '../testing/free-port.js';
import { waitFor } from '../testing/wait-for.js';
import type { BrokerRecord } from './broker.js';
import { createBroker, type BatchEvent } from './create-broker.js';
import { EMBEDDED_LOG_FILE } from './embedded/embedded-broker.js';
import { BrokerUnavailableError } from './errors.js';

describe('createBroker', function () {
  let dataDir: string;

  beforeEach(function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-create-broker-'));
  });

  afterEach(function () {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens the embedded log in the data directory when no Kafka brokers are configured', async function () {
    const broker = await createBroker({ kafkaBrokers: [], dataDir: path.join(dataDir, 'nested'), fsync: 'full' });
    try {
      await broker.producer().send('relay.ingest', [{ key: 'src_1', value: Buffer.from('{}') }]);
      expect(fs.existsSync(path.join(dataDir, 'nested', EMBEDDED_LOG_FILE))).to.equal(true);
    } finally {
      await broker.close();
    }
  });

  it('chooses Kafka when brokers are configured, and names them when none answers within the connect timeout', async function () {
    const closedPort = await unusedLoopbackPort();
    const broker = `127.0.0.1:${closedPort}`;
    const started = Date.now();
    const error = await createBroker({ kafkaBrokers: [broker], dataDir, kafka: { connectTimeoutMs: 1_500 } }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(BrokerUnavailableError);
    expect((error as Error).message).to.include(broker);
    expect(Date.now() - started).to.be.below(5_000);
    expect(fs.readdirSync(dataDir)).to.deep.equal([]);
  });

  it("reports each handled batch: its group, topic, records, its oldest record's time in the log and the handler's time", async function () {
    const later = 4_102_444_800_000; // the clock the broker compares record timestamps with: 2100-01-01
    const events: BatchEvent[] = [];
    const broker = await createBroker({ kafkaBrokers: [], dataDir, onBatch: (event) => events.push(event), now: () => later });
    try {
      const handled: BrokerRecord[] = [];
      let failed = false;
      const consumer = broker.consumer({
        groupId: 'relay-router',
        topics: ['relay.ingest'],
        fromBeginning: true,
        async handleBatch(batch) {
          // The first try fails: it is reported too, and the batch comes again.
          if (!failed) {
            failed = true;
            throw new Error('not yet');
          }
          handled.push(...batch.records);
        },
      });
      await broker.producer().send('relay.ingest', [
        { key: 'src_1', value: Buffer.from('{"n":1}') },
        { key: 'src_1', value: Buffer.from('{"n":2}') },
      ]);
      await consumer.start();
      await waitFor('both records handled', () => handled.length, (count) => count === 2);
      await consumer.stop();
      expect(events.map(({ groupId, topic, records }) => ({ groupId, topic, records }))).to.deep.equal([
        { groupId: 'relay-router', topic: 'relay.ingest', records: 2 },
        { groupId: 'relay-router', topic: 'relay.ingest', records: 2 },
      ]);
      for (const event of events) {
        expect(event.waitedMs).to.equal(later - handled[0]!.timestamp);
        expect(event.durationMs).to.be.at.least(0);
      }
    } finally {
      await broker.close();
    }
  });
});
