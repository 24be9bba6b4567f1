import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import type { VerificationConfig } from '../../../libs/signatures/verification-config.js';
import { verifySignature } from '../../../libs/signatures/verify-signature.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import type { ApiCall } from '../../../testing/api-client.js';
import { createdId, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

const BODY = Buffer.from('{"action":"opened","number":7}');
const CODEHOST_SECRET = 'round-trip-codehost-secret';
const HMAC_SECRET = 'round-trip-hmac-secret';
const BASIC = { username: 'relay', password: 'round-trip-password' };

/** Headers a provider would send for BODY, signed with `secret` the way each source verifies. */
const SIGNERS: Record<string, (secret: string) => Record<string, string>> = {
  codehost: (secret) => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(BODY).digest('hex')}` }),
  // The custom HMAC settings below: sha512, base64, `v1=` in X-Sig.
  hmac: (secret) => ({ 'x-sig': `v1=${createHmac('sha512', secret).update(BODY).digest('base64')}` }),
};

describeEachStore('export from one organization, import into another', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  /** Creates in organization A a codehost source, a custom HMAC source, a plain one and two destinations. */
  async function seed(p: string): Promise<{ sources: string[]; destinations: string[] }> {
    const create = (kind: string, body: Record<string, unknown>) => createdId(h.api, `/api/${kind}`, body);
    return {
      sources: [
        await create('sources', { name: 'Code host', slug: `${p}-codehost`, provider: 'codehost', verificationConfig: { type: 'codehost', secret: CODEHOST_SECRET }, rejectInvalidSignatures: true }),
        await create('sources', {
          name: 'Custom',
          slug: `${p}-custom`,
          provider: 'custom',
          verificationConfig: { type: 'hmac', secret: HMAC_SECRET, algorithm: 'sha512', header: 'X-Sig', encoding: 'base64', prefix: 'v1=' },
          dedupEnabled: true,
          dedupStrategy: 'idempotency_key',
          dedupCustomHeader: 'Idempotency-Key',
          ipFilterMode: 'denylist',
          ipDenylist: ['203.0.113.0/24'],
        }),
        await create('sources', { name: 'Plain', slug: `${p}-plain`, description: 'no verification', enabled: false }),
      ],
      destinations: [
        await create('destinations', {
          name: 'Basic',
          slug: `${p}-basic`,
          url: 'https://example.test/basic',
          method: 'PUT',
          description: 'with credentials',
          headers: { 'X-Team': 'payments' },
          authType: 'basic',
          authConfig: BASIC,
          timeoutMs: 5000,
          rateLimitPerMinute: 120,
          retryPolicy: { maxRetries: 2, initialDelay: 500, maxDelay: 4000, backoffMultiplier: 3 },
        }),
        await create('destinations', { name: 'Open', slug: `${p}-open`, url: 'https://example.test/open' }),
      ],
    };
  }

  async function exported(api: ApiCall, kind: string, ids: string[] | null, includeSensitive: boolean) {
    const query = [`includeSensitive=${includeSensitive}`, ...(ids ? [`ids=${ids.join(',')}`] : [])].join('&');
    const response = await api('GET', `/api/${kind}/export?${query}`);
    expect(response.status, response.text).to.equal(200);
    return response.body;
  }

  async function importInto(api: ApiCall, kind: string, envelope: unknown, conflictStrategy: string) {
    const response = await api('POST', `/api/${kind}/import`, { body: { ...(envelope as object), conflictStrategy } });
    expect(response.status, response.text).to.equal(200);
    return response.body;
  }

  /** Verifies BODY signed with `secret` against the source as stored in `org`, secret opened from the store. */
  async function verifies(org: string, slug: string, scheme: string, secret: string): Promise<boolean> {
    const orgRow = (await h.relay.store.organizations.bySlug(org))!;
    const row = (await h.relay.store.sources.findOneBy(orgRow.id, { slug }))!;
    const config = { ...row.verification, secret: h.unseal(row.secretSealed!) } as VerificationConfig;
    const result = verifySignature({ config, rawBody: BODY, headers: SIGNERS[scheme]!(secret), publicUrl: `https://relay.example.test/ingest/${org}/${slug}`, nowMs: Date.now() });
    return result.valid;
  }

  const entriesOf = (envelope: Record<string, unknown>, kind: string) => envelope[kind] as Record<string, unknown>[];

  it('with secrets: the imported sources verify the same signatures and the destinations carry the same credentials', async () => {
    const ids = await seed('full');
    const sourcesA = await exported(h.api, 'sources', ids.sources, true);
    const destinationsA = await exported(h.api, 'destinations', ids.destinations, true);

    // The whole envelope is the body, as exported.
    const sourcesResult = await importInto(h.apiB, 'sources', sourcesA, 'skip');
    const destinationsResult = await importInto(h.apiB, 'destinations', destinationsA, 'skip');
    for (const result of [sourcesResult, destinationsResult]) {
      expect(result.success).to.equal(true);
      expect(result.results.flatMap((r: { warnings: string[] }) => r.warnings)).to.deep.equal([]);
    }
    expect(sourcesResult.summary).to.deep.equal({ imported: 3, skipped: 0, overwritten: 0, failed: 0 });
    expect(destinationsResult.details.imported).to.deep.equal(['Basic', 'Open']);

    expect(await verifies('org-b', 'full-codehost', 'codehost', CODEHOST_SECRET)).to.equal(true);
    expect(await verifies('org-b', 'full-custom', 'hmac', HMAC_SECRET)).to.equal(true);
    expect(await verifies('org-b', 'full-custom', 'hmac', 'some-other-secret')).to.equal(false);

    // Organization B now exports exactly what A exported: every setting and secret survived.
    expect(entriesOf(await exported(h.apiB, 'sources', null, true), 'sources')).to.deep.equal(entriesOf(sourcesA, 'sources'));
    expect(entriesOf(await exported(h.apiB, 'destinations', null, true), 'destinations')).to.deep.equal(entriesOf(destinationsA, 'destinations'));
    const basic = entriesOf(await exported(h.apiB, 'destinations', null, true), 'destinations').find((d) => d.slug === 'full-basic')!;
    expect(basic.authConfig).to.deep.equal(BASIC);
  });

  it('without secrets: a created source gets a new secret, a created destination comes disabled without credentials, each with a warning', async () => {
    const ids = await seed('redacted');
    const sources = await exported(h.api, 'sources', ids.sources, false);
    const destinations = await exported(h.api, 'destinations', ids.destinations, false);

    const predicted = await importInto(h.apiB, 'sources', { ...sources, validateOnly: true }, 'skip');
    const sourcesResult = await importInto(h.apiB, 'sources', sources, 'skip');
    expect(sourcesResult.results).to.deep.equal(predicted.validationResults);
    const warnings = Object.fromEntries(sourcesResult.results.map((r: { slug: string; warnings: string[] }) => [r.slug, r.warnings]));
    expect(warnings['redacted-codehost']).to.have.length(1);
    expect(warnings['redacted-codehost'][0]).to.match(/^signingSecret is redacted: the source gets a newly generated secret/);
    expect(warnings['redacted-custom'][0]).to.match(/^signingSecret is redacted/);
    expect(warnings['redacted-plain']).to.deep.equal([]);

    // A new secret: the provider's signatures no longer verify until it is given the new one.
    expect(await verifies('org-b', 'redacted-codehost', 'codehost', CODEHOST_SECRET)).to.equal(false);
    const orgB = (await h.relay.store.organizations.bySlug('org-b'))!;
    const codehost = (await h.relay.store.sources.findOneBy(orgB.id, { slug: 'redacted-codehost' }))!;
    expect(h.unseal(codehost.secretSealed!)).to.match(/^whsec_/);
    // The custom HMAC settings came along all the same.
    const custom = (await h.relay.store.sources.findOneBy(orgB.id, { slug: 'redacted-custom' }))!;
    expect(custom.verification).to.deep.equal({ type: 'hmac', algorithm: 'sha512', header: 'X-Sig', encoding: 'base64', prefix: 'v1=' });

    const destinationsResult = await importInto(h.apiB, 'destinations', destinations, 'skip');
    const [basicResult, openResult] = destinationsResult.results;
    expect(basicResult.warnings).to.have.length(2);
    expect(basicResult.warnings[0]).to.match(/^authConfig is redacted: the destination is created disabled and without credentials/);
    // Header values are secrets too (issue 53): redacted, with no stored value to keep.
    expect(basicResult.warnings[1]).to.match(/^headers X-Team are redacted with no stored value: the destination is imported disabled without them/);
    expect(openResult.warnings).to.deep.equal([]);
    const inB = entriesOf(await exported(h.apiB, 'destinations', null, true), 'destinations');
    expect(inB.find((d) => d.slug === 'redacted-basic')).to.include({ isActive: false, authType: 'none' }).and.deep.include({ authConfig: {} });
    expect(inB.find((d) => d.slug === 'redacted-open')).to.include({ isActive: true });
  });

  it('without secrets, overwrite keeps the current secret and credentials, with a warning', async () => {
    const ids = await seed('kept');
    const sources = await exported(h.api, 'sources', ids.sources, false);
    const destinations = await exported(h.api, 'destinations', ids.destinations, false);
    const renamed = (envelope: Record<string, unknown>, kind: string) => ({
      ...envelope,
      [kind]: entriesOf(envelope, kind).map((entry) => ({ ...entry, name: `${entry.name} v2` })),
    });

    const sourcesResult = await importInto(h.api, 'sources', renamed(sources, 'sources'), 'overwrite');
    expect(sourcesResult.summary).to.deep.equal({ imported: 0, skipped: 0, overwritten: 3, failed: 0 });
    const warnings = Object.fromEntries(sourcesResult.results.map((r: { slug: string; warnings: string[] }) => [r.slug, r.warnings]));
    expect(warnings['kept-codehost']).to.deep.equal(['signingSecret is redacted: the current secret is kept']);
    expect(warnings['kept-plain']).to.deep.equal([]);
    expect(await verifies('org-a', 'kept-codehost', 'codehost', CODEHOST_SECRET)).to.equal(true);
    expect(await verifies('org-a', 'kept-custom', 'hmac', HMAC_SECRET)).to.equal(true);
    expect((await h.api('GET', `/api/sources/${ids.sources[0]}`)).body.name).to.equal('Code host v2');

    const destinationsResult = await importInto(h.api, 'destinations', renamed(destinations, 'destinations'), 'overwrite');
    expect(destinationsResult.results[0].warnings).to.deep.equal(['authConfig is redacted: the current credentials are kept']);
    const basic = entriesOf(await exported(h.api, 'destinations', [ids.destinations[0]!], true), 'destinations')[0]!;
    expect(basic).to.include({ name: 'Basic v2', isActive: true, authType: 'basic' }).and.deep.include({ authConfig: BASIC });
  });

  it('without secrets, overwriting credentials of another authType is an entry error: they cannot be kept', async () => {
    const ids = await seed('switch');
    const destinations = await exported(h.api, 'destinations', [ids.destinations[1]!], false);
    // The open destination (authType none) gets a bearer entry whose token was redacted.
    const entry = { ...entriesOf(destinations, 'destinations')[0], authType: 'bearer', authConfig: '***REDACTED***' };
    const result = await importInto(h.api, 'destinations', { destinations: [entry], conflictStrategy: 'overwrite' }, 'overwrite');
    expect(result.summary.failed).to.equal(1);
    expect(result.results[0].errors[0]).to.match(/^authConfig: is redacted while authType changes from none to bearer/);
  });
});
