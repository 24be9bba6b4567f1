import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { startRelayProcess, tempDataDir } from '../../libs/testing/relay-child-process.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';
import { startRelay, type RunningRelay } from './relay.js';

const TOKEN = 'metrics-token-0123456789';

describe('/metrics on its own port (METRICS_PORT, METRICS_HOST)', function () {
  let dataDirs: string[] = [];
  let relays: RunningRelay[] = [];

  async function start(env: Record<string, string>): Promise<RunningRelay> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-metrics-port-'));
    dataDirs.push(dataDir);
    const relay = await startRelay(loadConfig({ ...TEST_RELAY_ENV, PORT: '0', HOST: '127.0.0.1', RELAY_DATA_DIR: dataDir, RELAY_THREADS: '1', ...env }), {
      logger: createLogger({ level: 'silent' }),
    });
    relays.push(relay);
    return relay;
  }

  afterEach(async function () {
    await Promise.all(relays.map((relay) => relay.close()));
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
    relays = [];
    dataDirs = [];
  });

  it('serves /metrics on the metrics port, on loopback by default, and not on the ingest and API port', async () => {
    const relay = await start({});
    expect(new URL(relay.metricsUrl!).hostname).to.equal('127.0.0.1');
    expect(new URL(relay.metricsUrl!).port).not.to.equal(String(relay.port));
    const scraped = await fetch(`${relay.metricsUrl}/metrics`);
    expect(scraped.status).to.equal(200);
    expect(await scraped.text()).to.match(/^# TYPE relay_ingest_requests_total counter$/m);
    const onIngestPort = await fetch(`${relay.url}/metrics`);
    expect(onIngestPort.status).to.equal(404);
    expect(await onIngestPort.json()).to.include({ error: 'Not Found', code: 'NOT_FOUND' });
  });

  it('serves only /metrics there: the probes, the API and ingest stay on the ingest port', async () => {
    const relay = await start({});
    for (const route of ['/healthz', '/api/sources', '/ingest/default/any']) {
      expect((await fetch(`${relay.metricsUrl}${route}`)).status, route).to.equal(404);
    }
  });

  it('asks for RELAY_METRICS_TOKEN on the metrics port', async () => {
    const relay = await start({ RELAY_METRICS_TOKEN: TOKEN });
    for (const authorization of [undefined, 'Bearer wrong-token', TOKEN]) {
      const refused = await fetch(`${relay.metricsUrl}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(refused.status, String(authorization)).to.equal(401);
      expect(await refused.json()).to.include({ error: 'Unauthorized', code: 'UNAUTHORIZED' });
    }
    const scraped = await fetch(`${relay.metricsUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scraped.status).to.equal(200);
  });

  it('serves /metrics nowhere with METRICS_PORT=off', async () => {
    const relay = await start({ METRICS_PORT: 'off' });
    expect(relay.metricsUrl).to.equal(undefined);
    expect((await fetch(`${relay.url}/metrics`)).status).to.equal(404);
  });

  it('runs a metrics port in each role process, logged at start (npm start -- --role api)', async function () {
    this.timeout(90_000);
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    const member = await startRelayProcess('api', { RELAY_DATA_DIR: dataDir, RELAY_THREADS: '1' });
    try {
      expect(member.metricsUrl).to.be.a('string').and.not.equal(member.url);
      expect(member.output()).to.include(`metrics on ${member.metricsUrl}/metrics`);
      expect(await member.metrics()).to.match(/^# TYPE relay_process_cpu_seconds_total counter$/m);
      expect((await fetch(`${member.url}/metrics`)).status).to.equal(404);
    } finally {
      await member.terminate();
    }
  });
});
