import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRelay, type RunningRelay } from '../relay/relay.js';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient } from '../../testing/api-client.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const API_KEY = 'restart-test-key-0123456789';

// The embedded default keeps its dedup index in memory (libs/store/dedup-journal.ts).
describe('Ingest dedup on the embedded default', () => {
  let dataDir: string;
  let relay: RunningRelay | undefined;
  const start = async () => {
    relay = await startRelay(loadConfig({ ...TEST_RELAY_ENV, PORT: '0', HOST: '127.0.0.1', RELAY_DATA_DIR: dataDir, RELAY_API_KEY: API_KEY, RELAY_THREADS: '1' }), { logger: createLogger({ level: 'silent' }) });
    return apiClient(relay.url, API_KEY);
  };
  const restart = async () => {
    await relay!.close();
    relay = undefined;
    return start();
  };

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-dedup-restart-'));
  });

  afterEach(async () => {
    await relay?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers duplicate of the first event for the same body and the same provider id after a restart, and received for new ones', async () => {
    let api = await start();
    const source = await api('POST', '/api/sources', { body: { name: 'Code host', slug: 'codehost', provider: 'codehost', dedupEnabled: true } });
    expect(source.status, source.text).to.equal(201);
    const ingest = (body: string, delivery: string) =>
      api('POST', '/ingest/default/codehost', { key: null, rawBody: body, headers: { 'content-type': 'application/json', 'x-github-delivery': delivery } });
    const first = await ingest('{"n":1}', 'delivery-1');
    expect(first.body.status, first.text).to.equal('received');

    api = await restart();
    expect((await ingest('{"n":1}', 'delivery-2')).body).to.deep.equal({ eventId: first.body.eventId, status: 'duplicate' });
    expect((await ingest('{"n":2}', 'delivery-1')).body).to.deep.equal({ eventId: first.body.eventId, status: 'duplicate' });
    expect((await ingest('{"n":3}', 'delivery-3')).body.status).to.equal('received');
  });

  it('shows the keys it holds in memory on /metrics', async () => {
    const api = await start();
    const indexKeys = async () => {
      const metrics = await (await fetch(`${relay!.metricsUrl}/metrics`)).text();
      const line = metrics.split('\n').find((l) => l.startsWith('relay_dedup_index_keys '));
      return Number(line?.split(' ')[1]);
    };
    const source = await api('POST', '/api/sources', { body: { name: 'Code host', slug: 'codehost', provider: 'codehost', dedupEnabled: true } });
    expect(source.status, source.text).to.equal(201);
    const before = await indexKeys();
    const ingested = await api('POST', '/ingest/default/codehost', { key: null, rawBody: '{"n":1}', headers: { 'content-type': 'application/json', 'x-github-delivery': 'd-1' } });
    expect(ingested.body.status, ingested.text).to.equal('received');
    // The body's 5-minute key and the provider id.
    expect(await indexKeys()).to.equal(before + 2);
  });
});
