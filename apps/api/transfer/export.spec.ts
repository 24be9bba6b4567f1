import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { createdId, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SOURCE_ENTRY_KEYS = [
  'name', 'slug', 'provider', 'description', 'signingSecret', 'verificationConfig', 'rejectInvalidSignatures', 'rateLimitPerMinute',
  'ipFilterMode', 'ipAllowlist', 'ipDenylist', 'encryptFields', 'maskFields', 'dedupEnabled', 'dedupStrategy', 'dedupWindowHours',
  'dedupCustomHeader', 'isActive',
];
const DESTINATION_ENTRY_KEYS = [
  'name', 'slug', 'url', 'method', 'description', 'headers', 'authType', 'authConfig', 'timeoutMs', 'rateLimitPerMinute', 'retryPolicy', 'ordering', 'autoDisableAfterSeconds', 'isActive',
];
const HOOK_SECRET = 'export-codehost-secret-0001';

describeEachStore('GET /api/sources/export and /api/destinations/export', (target) => {
  let h: ApiHarness;
  const ids: Record<string, string> = {};

  before(async function () {
    h = await startApiHarness(this, target);
    const create = (path: string, body: Record<string, unknown>, api = h.api) => createdId(api, path, body);
    // Created out of slug order: the export sorts by slug.
    ids.zulu = await create('/api/sources', { name: 'Zulu', slug: 'zulu', provider: 'codehost', verificationConfig: { type: 'codehost', secret: HOOK_SECRET } });
    ids.alpha = await create('/api/sources', {
      name: 'Alpha',
      slug: 'alpha',
      provider: 'custom',
      description: 'custom hmac',
      verificationConfig: { type: 'hmac', secret: 'alpha-hmac-secret', algorithm: 'sha512', header: 'X-Sig', encoding: 'base64', prefix: 'v1=' },
      enabled: false,
    });
    ids.plain = await create('/api/sources', { name: 'Plain', slug: 'plain' });
    ids.bearer = await create('/api/destinations', {
      name: 'Bearer',
      slug: 'bearer',
      url: 'https://example.test/hook',
      authType: 'bearer',
      authConfig: { token: 'bearer-token-0001' },
      retryPolicy: { maxRetries: 3 },
    });
    ids.open = await create('/api/destinations', { name: 'Open', slug: 'open', url: 'https://example.test/open' });
    ids.foreignSource = await create('/api/sources', { name: 'Theirs', slug: 'theirs' }, h.apiB);
    ids.foreignDestination = await create('/api/destinations', { name: 'Theirs', url: 'https://example.test/b' }, h.apiB);
  });

  after(async () => {
    await h?.stop();
  });

  describe('sources', () => {
    it('answers the version 1.0 envelope of every source of the organization, sorted by slug, secrets redacted', async () => {
      const response = await h.api('GET', '/api/sources/export');
      expect(response.status).to.equal(200);
      const { version, exportedAt, organizationSlug, sources, ...rest } = response.body;
      expect(rest).to.deep.equal({});
      expect(version).to.equal('1.0');
      expect(exportedAt).to.match(ISO);
      expect(organizationSlug).to.equal('org-a');
      expect(sources.map((s: { slug: string }) => s.slug)).to.deep.equal(['alpha', 'plain', 'zulu']);
      for (const entry of sources) expect(Object.keys(entry)).to.have.members(SOURCE_ENTRY_KEYS);
      expect(sources[0]).to.deep.equal({
        name: 'Alpha',
        slug: 'alpha',
        provider: 'custom',
        description: 'custom hmac',
        signingSecret: '***REDACTED***',
        verificationConfig: { type: 'hmac', algorithm: 'sha512', header: 'X-Sig', encoding: 'base64', prefix: 'v1=' },
        rejectInvalidSignatures: false,
        rateLimitPerMinute: null,
        ipFilterMode: 'none',
        ipAllowlist: [],
        ipDenylist: [],
        encryptFields: [],
        maskFields: [],
        dedupEnabled: false,
        dedupStrategy: 'auto',
        dedupWindowHours: 24,
        dedupCustomHeader: null,
        isActive: false,
      });
      expect(response.text).not.to.include(HOOK_SECRET);
    });

    it('shows the secrets with includeSensitive=true; a source that verifies nothing has no secret (null)', async () => {
      const response = await h.api('GET', '/api/sources/export?includeSensitive=true');
      expect(response.status).to.equal(200);
      const bySlug = Object.fromEntries(response.body.sources.map((s: { slug: string }) => [s.slug, s]));
      expect(bySlug.zulu.signingSecret).to.equal(HOOK_SECRET);
      expect(bySlug.alpha.signingSecret).to.equal('alpha-hmac-secret');
      expect(bySlug.plain.signingSecret).to.equal(null);
      expect(bySlug.plain.verificationConfig).to.deep.equal({ type: 'none' });
    });

    it('exports only the listed ids, once each', async () => {
      const response = await h.api('GET', `/api/sources/export?ids=${ids.zulu},${ids.plain},${ids.zulu}`);
      expect(response.status).to.equal(200);
      expect(response.body.sources.map((s: { slug: string }) => s.slug)).to.deep.equal(['plain', 'zulu']);
    });

    it('answers 404 RESOURCE_NOT_FOUND naming every unknown or foreign id', async () => {
      const response = await h.api('GET', `/api/sources/export?ids=${ids.alpha},${ids.foreignSource},src_nope`);
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect(response.body.message).to.include(ids.foreignSource).and.include('src_nope').and.not.include(ids.alpha);
    });

    it('another organization exports only its own sources', async () => {
      const response = await h.apiB('GET', '/api/sources/export?includeSensitive=true');
      expect(response.body.organizationSlug).to.equal('org-b');
      expect(response.body.sources.map((s: { slug: string }) => s.slug)).to.deep.equal(['theirs']);
    });

    for (const [query, field] of [
      ['includeSensitive=yes', 'includeSensitive'],
      ['ids=', 'ids'],
      ['ids=,,', 'ids'],
      [`ids=${Array.from({ length: 1001 }, (_, i) => `s${i}`).join(',')}`, 'ids'],
    ]) {
      it(`answers 400 VALIDATION_ERROR for ${query.slice(0, 40)}`, async () => {
        const response = await h.api('GET', `/api/sources/export?${query}`);
        expect(response.status, response.text).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
        expect(response.body.details.map((d: { field: string }) => d.field)).to.include(field);
      });
    }
  });

  describe('destinations', () => {
    it('answers the envelope with credentials redacted and retryPolicy and description included', async () => {
      const response = await h.api('GET', '/api/destinations/export');
      expect(response.status).to.equal(200);
      expect(response.body.version).to.equal('1.0');
      expect(response.body.organizationSlug).to.equal('org-a');
      const [bearer, open] = response.body.destinations;
      for (const entry of response.body.destinations) expect(Object.keys(entry)).to.have.members(DESTINATION_ENTRY_KEYS);
      expect(bearer).to.deep.equal({
        name: 'Bearer',
        slug: 'bearer',
        url: 'https://example.test/hook',
        method: 'POST',
        description: null,
        headers: {},
        authType: 'bearer',
        authConfig: '***REDACTED***',
        timeoutMs: 30000,
        rateLimitPerMinute: null,
        retryPolicy: { maxRetries: 3, initialDelay: 1000, maxDelay: 60000, backoffMultiplier: 2 },
        ordering: 'none',
        autoDisableAfterSeconds: 259200,
        isActive: true,
      });
      // Nothing to redact: no credentials.
      expect(open.authConfig).to.deep.equal({});
      expect(response.text).not.to.include('bearer-token-0001');
    });

    it('shows the credentials with includeSensitive=true', async () => {
      const response = await h.api('GET', `/api/destinations/export?includeSensitive=true&ids=${ids.bearer}`);
      expect(response.status).to.equal(200);
      expect(response.body.destinations).to.have.length(1);
      expect(response.body.destinations[0].authConfig).to.deep.equal({ token: 'bearer-token-0001' });
    });

    it('answers 404 naming a foreign destination id', async () => {
      const response = await h.api('GET', `/api/destinations/export?ids=${ids.foreignDestination}`);
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect(response.body.message).to.include(ids.foreignDestination);
    });
  });
});
