import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { unusedLoopbackPort } from '../testing/free-port.js';
import { createBroker } from './create-broker.js';
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
});
