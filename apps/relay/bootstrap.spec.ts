import { expect } from 'chai';
import net from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { openStore } from '../../libs/store/store.js';
import { apiClient } from '../../testing/api-client.js';
import { startRelayProcess, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';
import { describeEachStore, type StoreLocation, type StoreTarget } from '../../libs/testing/store-targets.js';
import { startRelay, type RunningRelay } from './relay.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

const BOOTSTRAP_KEY = 'bootstrap-spec-relay-api-key-0123';
const ENCRYPTION_KEY = Buffer.alloc(32, 5).toString('base64');

function storeEnv(location: StoreLocation): Record<string, string> {
  return { RELAY_DATA_DIR: location.dataDir, ...(location.databaseUrl ? { DATABASE_URL: location.databaseUrl } : {}) };
}

/** How many API keys the store holds, read past any running relay. */
async function storedKeyCount(location: StoreLocation): Promise<number> {
  const store = await openStore(location);
  try {
    return await store.apiKeys.count();
  } finally {
    await store.close();
  }
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
    startRelay(loadConfig({ ...TEST_RELAY_ENV, ...storeEnv(location), PORT: '0', HOST: '127.0.0.1', RELAY_ROLE: 'api', RELAY_THREADS: '1', RELAY_API_KEY: BOOTSTRAP_KEY, RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY }), { logger });

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
    expect(warning.msg).to.include('relay keys create --org default');
    expect(JSON.stringify(warnings)).not.to.include(BOOTSTRAP_KEY);
    const listed = await again('GET', '/api/keys', { key: successor.body.key });
    expect(listed.body.data.map((key: { name: string }) => key.name)).to.deep.equal(['successor']);
  });
});

describeEachStore('the first start', (target: StoreTarget) => {
  let location: StoreLocation & { cleanup(): Promise<void> };
  let blocker: net.Server | undefined;
  let relay: RelayProcess | undefined;

  before(async function () {
    location = await target.prepare(this);
  });

  after(async function () {
    this.timeout(30_000);
    await relay?.kill();
    await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
    await location?.cleanup();
  });

  const env = () => ({ ...storeEnv(location), RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY, RELAY_THREADS: '1' });

  it('on a port in use fails with a clear message and creates no key; the next start prints a key that works', async function () {
    this.timeout(120_000);
    blocker = net.createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const busyPort = (blocker.address() as net.AddressInfo).port;

    const failed = await startRelayProcess('all', { ...env(), PORT: String(busyPort) }).then(
      () => expect.fail('the relay started on a port in use'),
      (error: Error) => error.message,
    );
    expect(failed).to.include(`relay failed to start: PORT: 127.0.0.1:${busyPort} is already in use`);
    expect(failed).not.to.match(/API key for organization|rk_[A-Za-z0-9_-]{32}|\n\s+at /);
    expect(await storedKeyCount(location)).to.equal(0);

    relay = await startRelayProcess('all', env());
    // Written right after the "relay listening" line the start waits for.
    const printed = await waitFor(
      'the first key on stdout',
      () => /API key for organization "default" \(shown once, store it now\):\n\s+(rk_[A-Za-z0-9_-]{32})\n/.exec(relay!.output())?.[1],
      isDefined,
      10_000,
    );
    const answer = await apiClient(relay.url, printed)('GET', '/api/keys/current');
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body).to.include({ name: 'bootstrap', scope: 'admin' });
  });
});
