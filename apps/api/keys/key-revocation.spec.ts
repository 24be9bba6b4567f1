import { expect } from 'chai';
import { loadConfig } from '../../../libs/config/config.js';
import { createLogger } from '../../../libs/logging/logger.js';
import { apiClient } from '../../../testing/api-client.js';
import { BACKEND_TARGETS, type BackendLocation } from '../../../libs/testing/backend-targets.js';
import { waitFor } from '../../../libs/testing/wait-for.js';
import { startRelay, type RunningRelay } from '../../relay/relay.js';
import { TEST_RELAY_ENV } from '../../../libs/testing/test-relay-env.js';

const kafkaPostgres = BACKEND_TARGETS.find((target) => target.name.includes('Kafka'))!;
const ADMIN_KEY = 'revocation-test-admin-key-0123';

describe(`revoking an API key reaches every api process [${kafkaPostgres.name}]`, function () {
  this.timeout(120_000);
  let location: BackendLocation | undefined;
  const relays: RunningRelay[] = [];

  before(async function () {
    location = await kafkaPostgres.prepare(this);
    const config = loadConfig({ ...TEST_RELAY_ENV, ...location.env, PORT: '0', HOST: '127.0.0.1', RELAY_ROLE: 'api', RELAY_API_KEY: ADMIN_KEY, RELAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64') });
    // One after the other: the first applies the migrations.
    for (let n = 0; n < 2; n += 1) relays.push(await startRelay(config, { logger: createLogger({ level: 'silent' }) }));
  });

  after(async () => {
    for (const relay of relays) await relay.close();
    await location?.cleanup();
  });

  it('a key revoked through one process gets 401 from the other within 1 s', async () => {
    const [first, second] = relays.map((relay) => apiClient(relay.url, ADMIN_KEY)) as [ReturnType<typeof apiClient>, ReturnType<typeof apiClient>];
    const created = await first('POST', '/api/keys', { body: { name: 'leaked', scope: 'write' } });
    expect(created.status, created.text).to.equal(201);
    // The other process has the key in its cache now.
    expect((await second('GET', '/api/sources', { key: created.body.key })).status).to.equal(200);

    expect((await first('DELETE', `/api/keys/${created.body.id}`)).status).to.equal(204);
    const revokedAt = Date.now();
    await waitFor('the other process to refuse the revoked key', () => second('GET', '/api/sources', { key: created.body.key }), (r) => r.status === 401, 5_000, 20);
    const elapsed = Date.now() - revokedAt;
    expect(elapsed, `refused after ${elapsed} ms`).to.be.below(1_000);
  });
});
