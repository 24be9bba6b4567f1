import { expect } from 'chai';
import { Writable } from 'node:stream';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient } from '../../libs/testing/api-client.js';
import { describeEachStore, type StoreLocation, type StoreTarget } from '../../libs/testing/store-targets.js';
import { startRelay, type RunningRelay } from './relay.js';

const BOOTSTRAP_KEY = 'bootstrap-spec-relay-api-key-0123';
const ENCRYPTION_KEY = Buffer.alloc(32, 5).toString('base64');

function storeEnv(location: StoreLocation): Record<string, string> {
  return { RELAY_DATA_DIR: location.dataDir, ...(location.databaseUrl ? { DATABASE_URL: location.databaseUrl } : {}) };
}

describeEachStore('a revoked RELAY_API_KEY stays revoked across restarts', (target: StoreTarget) => {
  let location: StoreLocation & { cleanup(): Promise<void> };
  let relay: RunningRelay | undefined;
  const warnings: string[] = [];
  const logger = createLogger({
    level: 'warn',
    destination: new Writable({
      write(chunk, _encoding, done) {
        warnings.push(String(chunk));
        done();
      },
    }),
  });
  const start = () =>
    startRelay(loadConfig({ ...storeEnv(location), PORT: '0', HOST: '127.0.0.1', RELAY_ROLE: 'api', RELAY_THREADS: '1', RELAY_API_KEY: BOOTSTRAP_KEY, RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY }), { logger });

  before(async function () {
    this.timeout(60_000);
    location = await target.prepare(this);
    relay = await start();
  });

  after(async function () {
    this.timeout(30_000);
    await relay?.close();
    await location?.cleanup();
  });

  it('after a restart with the same RELAY_API_KEY the key still gets 401, and the start warns how to make a new one', async function () {
    this.timeout(60_000);
    const bootstrap = apiClient(relay!.url, BOOTSTRAP_KEY);
    // The last admin key cannot be revoked: another admin takes over first.
    const successor = await bootstrap('POST', '/api/keys', { body: { name: 'successor', scope: 'admin' } });
    expect(successor.status, successor.text).to.equal(201);
    const bootstrapKeyId = (await bootstrap('GET', '/api/keys/current')).body.id;
    const revoked = await bootstrap('DELETE', `/api/keys/${bootstrapKeyId}`, { key: successor.body.key });
    expect(revoked.status, revoked.text).to.equal(204);
    expect((await bootstrap('GET', '/api/sources')).status).to.equal(401);
    expect(warnings.join('')).not.to.include('RELAY_API_KEY was revoked');

    await relay!.close();
    relay = await start();

    const again = apiClient(relay.url, BOOTSTRAP_KEY);
    const refused = await again('GET', '/api/sources');
    expect(refused.status, refused.text).to.equal(401);
    expect(refused.body.code).to.equal('UNAUTHORIZED');
    const warning = warnings.map((line) => JSON.parse(line)).find((entry) => String(entry.msg).includes('RELAY_API_KEY was revoked'));
    expect(warning, warnings.join('')).to.include({ level: 40, keyId: bootstrapKeyId });
    expect(warning.msg).to.include('relay keys create');
    expect(JSON.stringify(warnings)).not.to.include(BOOTSTRAP_KEY);
    const listed = await again('GET', '/api/keys', { key: successor.body.key });
    expect(listed.body.data.map((key: { name: string }) => key.name)).to.deep.equal(['successor']);
  });
});
