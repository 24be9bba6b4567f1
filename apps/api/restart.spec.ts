import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { createdId, startApiHarness, type ApiHarness } from '../../testing/api-harness.js';

const VERIFICATION_SECRET = 'restart-verification-secret-7777';
const PASSWORD = 'restart-password-plaintext-8888';

describeEachStore('Restart', (target) => {
  let h: ApiHarness;
  let ids: { source: string; hmacSource: string; destination: string; route: string; disabledRoute: string };
  let beforeRestart: Record<string, unknown>;
  let signingSecret: string;

  async function everything() {
    return {
      source: (await h.api('GET', `/api/sources/${ids.source}`)).body,
      hmacSource: (await h.api('GET', `/api/sources/${ids.hmacSource}`)).body,
      destination: (await h.api('GET', `/api/destinations/${ids.destination}`)).body,
      route: (await h.api('GET', `/api/routes/${ids.route}`)).body,
      disabledRoute: (await h.api('GET', `/api/routes/${ids.disabledRoute}`)).body,
      sources: (await h.api('GET', '/api/sources')).body,
      destinations: (await h.api('GET', '/api/destinations')).body,
      routes: (await h.api('GET', '/api/routes')).body,
      orgBSources: (await h.apiB('GET', '/api/sources')).body,
    };
  }

  before(async function () {
    h = await startApiHarness(this, target);
    const source = await createdId(h.api, '/api/sources', {
      name: 'Survivor',
      slug: 'survivor',
      provider: 'codehost',
      verificationConfig: { type: 'codehost', secret: VERIFICATION_SECRET },
      dedupEnabled: true,
      dedupStrategy: 'payload_hash',
      ipFilterMode: 'denylist',
      ipDenylist: ['198.51.100.0/24'],
    });
    const hmacSource = await createdId(h.api, '/api/sources', {
      name: 'Custom',
      slug: 'custom-hmac',
      verificationConfig: { type: 'hmac', algorithm: 'sha1', header: 'X-Sig', encoding: 'base64url', prefix: 'sha1=' },
      enabled: false,
    });
    const destination = await createdId(h.api, '/api/destinations', {
      name: 'Survivor destination',
      url: 'https://survivor.example.com',
      authType: 'basic',
      authConfig: { username: 'relay', password: PASSWORD },
      retryPolicy: { maxRetries: 3 },
      headers: { 'X-Kept': 'yes' },
    });
    const route = await createdId(h.api, '/api/routes', { sourceId: source, destinationId: destination });
    const disabledRoute = await createdId(h.api, '/api/routes', { sourceId: hmacSource, destinationId: destination, enabled: false });
    await createdId(h.apiB, '/api/sources', { name: 'B survivor', slug: 'b-survivor' });
    ids = { source, hmacSource, destination, route, disabledRoute };
    signingSecret = (await h.api('GET', `/api/destinations/${destination}/signing-secret`)).body.secret;
    beforeRestart = await everything();
    await h.restart();
  });

  after(async () => {
    await h?.stop();
  });

  it('keeps every source, destination and route exactly as it was, for both organizations', async () => {
    expect(await everything()).to.deep.equal(beforeRestart);
  });

  it('still decrypts the secrets: masks show the same last 4 and the signing secret reads back unchanged', async () => {
    const source = (await h.api('GET', `/api/sources/${ids.source}`)).body;
    expect(source.verificationConfig.secret).to.equal('****7777');
    const destination = (await h.api('GET', `/api/destinations/${ids.destination}`)).body;
    expect(destination.authConfig).to.deep.equal({ username: 'relay', password: '****8888' });
    expect((await h.api('GET', `/api/destinations/${ids.destination}/signing-secret`)).body).to.deep.equal({ secret: signingSecret });
  });

  it('still accepts the API keys of both organizations', async () => {
    expect((await h.api('GET', '/api/routes')).status).to.equal(200);
    expect((await h.apiB('GET', '/api/routes')).body.pagination.total).to.equal(0);
  });

  it('rotates the source secret and the signing secret after the restart', async () => {
    const rotated = await h.api('POST', `/api/sources/${ids.source}/rotate-secret`);
    expect(rotated.status).to.equal(200);
    expect((await h.api('GET', `/api/sources/${ids.source}`)).body.verificationConfig.secret).to.equal(`****${rotated.body.verificationConfig.secret.slice(-4)}`);
    const signing = await h.api('POST', `/api/destinations/${ids.destination}/rotate-signing-secret`);
    expect(signing.status).to.equal(200);
    expect(signing.body.secret).not.to.equal(signingSecret);
    expect((await h.api('GET', `/api/destinations/${ids.destination}/signing-secret`)).body.secret).to.equal(signing.body.secret);
  });

  it('keeps enforcing slug uniqueness and accepts new resources after the restart', async () => {
    const duplicate = await h.api('POST', '/api/sources', { body: { name: 'Again', slug: 'survivor' } });
    expect(duplicate.status).to.equal(409);
    expect(duplicate.body.code).to.equal('DUPLICATE_SLUG');
    const fresh = await createdId(h.api, '/api/sources', { name: 'Newcomer', slug: 'newcomer' });
    expect((await h.api('GET', '/api/sources')).body.data[0].id).to.equal(fresh);
  });

  it('a second restart keeps what was written after the first', async () => {
    const snapshot = {
      sources: (await h.api('GET', '/api/sources')).body,
      destination: (await h.api('GET', `/api/destinations/${ids.destination}`)).body,
      signing: (await h.api('GET', `/api/destinations/${ids.destination}/signing-secret`)).body,
    };
    await h.restart();
    expect({
      sources: (await h.api('GET', '/api/sources')).body,
      destination: (await h.api('GET', `/api/destinations/${ids.destination}`)).body,
      signing: (await h.api('GET', `/api/destinations/${ids.destination}/signing-secret`)).body,
    }).to.deep.equal(snapshot);
  });
});
