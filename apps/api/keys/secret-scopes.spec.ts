import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { created, createdId, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

const SOURCE_SECRET = 'secret-scopes-source-secret-0001';
const DESTINATION_TOKEN = 'secret-scopes-bearer-token-0001';

/** Issue 53: a `read` or `write` key must never see a secret in clear, nor replace one. */
describeEachStore('secrets need an admin key', (target) => {
  let h: ApiHarness;
  let sourceId: string;
  let destinationId: string;

  before(async function () {
    h = await startApiHarness(this, target);
    sourceId = await createdId(h.api, '/api/sources', { name: 'Hooks', slug: 'hooks', provider: 'codehost', verificationConfig: { type: 'codehost', secret: SOURCE_SECRET } });
    destinationId = await createdId(h.api, '/api/destinations', {
      name: 'Orders',
      url: 'https://orders.example.test/hook',
      authType: 'bearer',
      authConfig: { token: DESTINATION_TOKEN },
    });
  });

  after(async () => {
    await h?.stop();
  });

  /** What the admin key sees in clear: the secrets a refused call must leave as they were. */
  async function secretsInClear() {
    const sources = await h.api('GET', '/api/sources/export?includeSensitive=true');
    const destinations = await h.api('GET', '/api/destinations/export?includeSensitive=true');
    const signing = await h.api('GET', `/api/destinations/${destinationId}/signing-secret`);
    for (const response of [sources, destinations, signing]) expect(response.status, response.text).to.equal(200);
    return { source: sources.body.sources[0].signingSecret, destination: destinations.body.destinations[0].authConfig, signing: signing.body.secret };
  }

  const secretCalls = () =>
    [
      ['GET', '/api/sources/export?includeSensitive=true'],
      ['GET', '/api/destinations/export?includeSensitive=true'],
      ['GET', `/api/destinations/${destinationId}/signing-secret`],
      ['POST', `/api/sources/${sourceId}/rotate-secret`],
      ['POST', `/api/destinations/${destinationId}/rotate-signing-secret`],
    ] as const;

  for (const scope of ['read', 'write'] as const) {
    it(`a ${scope} key gets 403 FORBIDDEN from every call that shows or replaces a secret, and nothing changes`, async () => {
      const { key } = await created(h.api, '/api/keys', { name: `${scope} key`, scope });
      const before = await secretsInClear();
      expect(before).to.deep.equal({ source: SOURCE_SECRET, destination: { token: DESTINATION_TOKEN }, signing: before.signing });
      for (const [method, path] of secretCalls()) {
        const response = await h.api(method, path, { key });
        expect(response.status, `${method} ${path}: ${response.text}`).to.equal(403);
        expect(response.body).to.include({ error: 'Forbidden', code: 'FORBIDDEN' });
        expect(response.body.message).to.include(`"${scope}"`).and.to.include('"admin"');
        for (const secret of [SOURCE_SECRET, DESTINATION_TOKEN, before.signing]) expect(response.text).not.to.include(secret);
      }
      expect(await secretsInClear()).to.deep.equal(before);
    });

    it(`a ${scope} key still exports with the secrets redacted`, async () => {
      const { key } = await created(h.api, '/api/keys', { name: `${scope} exporter`, scope });
      for (const query of ['', '?includeSensitive=false']) {
        const sources = await h.api('GET', `/api/sources/export${query}`, { key });
        expect(sources.status, sources.text).to.equal(200);
        expect(sources.body.sources[0].signingSecret).to.equal('***REDACTED***');
        const destinations = await h.api('GET', `/api/destinations/export${query}`, { key });
        expect(destinations.status, destinations.text).to.equal(200);
        expect(destinations.body.destinations[0].authConfig).to.equal('***REDACTED***');
      }
    });
  }

  it('an admin key other than the bootstrap one reads and rotates the secrets', async () => {
    const { key } = await created(h.api, '/api/keys', { name: 'second admin', scope: 'admin' });
    const before = await secretsInClear();
    const rotatedSource = await h.api('POST', `/api/sources/${sourceId}/rotate-secret`, { key });
    expect(rotatedSource.status, rotatedSource.text).to.equal(200);
    const rotatedSigning = await h.api('POST', `/api/destinations/${destinationId}/rotate-signing-secret`, { key });
    expect(rotatedSigning.status, rotatedSigning.text).to.equal(200);
    const signing = await h.api('GET', `/api/destinations/${destinationId}/signing-secret`, { key });
    expect(signing.body.secret).to.equal(rotatedSigning.body.secret).and.not.to.equal(before.signing);
    const sources = await h.api('GET', '/api/sources/export?includeSensitive=true', { key });
    expect(sources.body.sources[0].signingSecret).to.equal(rotatedSource.body.verificationConfig.secret).and.not.to.equal(SOURCE_SECRET);
  });
});
