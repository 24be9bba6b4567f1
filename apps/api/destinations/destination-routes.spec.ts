import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { Webhook } from 'standardwebhooks';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { buildDeliveryRequest } from '../../../libs/delivery/build-request.js';
import { createStoreDeliveryLookup } from '../../../libs/delivery/store-lookup.js';
import { deleteExpiredPreviousSigningSecrets } from '../../../libs/destinations/previous-signing-secrets.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SIGNING_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const SUMMARY_KEYS = ['id', 'name', 'url', 'enabled', 'successRate', 'avgLatency', 'deliveriesCount'];
const DEFAULT_RETRY_POLICY = { maxRetries: 5, initialDelay: 1000, maxDelay: 60000, backoffMultiplier: 2 };
const PASSWORD = 'basic-password-plaintext-9876';
const TOKEN = 'bearer-token-plaintext-5432';

describeEachStore('Destinations API', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  const createDestination = (body: Record<string, unknown>) => created(h.api, '/api/destinations', body);

  const sealedAuth = async (id: string) => String((await h.rawRow('destinations', id))!.auth_config_sealed);

  describe('POST /api/destinations', () => {
    it('takes autoDisableAfterSeconds of at least 10 seconds, or null for never', async () => {
      const made = await createDestination({ name: 'Auto disabled', url: 'https://orders.example.com/auto', autoDisableAfterSeconds: 20 });
      expect(made.autoDisableAfterSeconds).to.equal(20);
      const never = await h.api('PATCH', `/api/destinations/${made.id}`, { body: { autoDisableAfterSeconds: null } });
      expect(never.body.autoDisableAfterSeconds).to.equal(null);
      for (const value of [9, 10.5, '60']) {
        const refused = await h.api('PATCH', `/api/destinations/${made.id}`, { body: { autoDisableAfterSeconds: value } });
        expect(refused.status, String(value)).to.equal(400);
        expect(refused.body.details[0].field).to.equal('autoDisableAfterSeconds');
      }
    });

    it('answers 201 with the created destination and every spec default filled in', async () => {
      const response = await h.api('POST', '/api/destinations', { body: { name: 'Orders Service', url: 'https://orders.example.com/hook' } });
      expect(response.status).to.equal(201);
      const { id, createdAt, updatedAt, ...rest } = response.body;
      expect(id).to.match(/^dst_[0-9a-z]{26}$/);
      expect(createdAt).to.match(ISO);
      expect(updatedAt).to.equal(createdAt);
      expect(rest).to.deep.equal({
        name: 'Orders Service',
        slug: 'orders-service',
        type: 'http',
        url: 'https://orders.example.com/hook',
        method: 'POST',
        description: null,
        headers: {},
        authType: 'none',
        authConfig: {},
        timeoutMs: 30000,
        rateLimitPerMinute: null,
        retryPolicy: DEFAULT_RETRY_POLICY,
        ordering: 'none',
        autoDisableAfterSeconds: 259200,
        enabled: true,
        disabledReason: null,
        disabledAt: null,
        successRate: null,
        avgLatency: null,
        deliveriesCount: 0,
        lastDeliveryAt: null,
        circuitState: 'closed',
      });
    });

    it('fills the omitted fields of a partial retryPolicy with their defaults', async () => {
      const created = await createDestination({ name: 'Partial retry', url: 'https://a.example.com', retryPolicy: { maxRetries: 2, maxDelay: 5000 } });
      expect(created.retryPolicy).to.deep.equal({ maxRetries: 2, initialDelay: 1000, maxDelay: 5000, backoffMultiplier: 2 });
    });

    it('keeps every optional field it is given, with the credentials masked', async () => {
      const body = {
        name: 'Full',
        slug: 'full-destination',
        url: 'http://full.example.com:8080/in?x=1',
        method: 'PUT',
        description: 'every field',
        headers: { 'X-Team': 'payments', 'X-Env': 'prod' },
        authType: 'basic',
        authConfig: { username: 'relay', password: PASSWORD },
        timeoutMs: 60000,
        rateLimitPerMinute: 120,
        retryPolicy: { maxRetries: 0, initialDelay: 100, maxDelay: 100, backoffMultiplier: 1 },
        enabled: false,
      };
      const created = await createDestination(body);
      // Header values are secrets too (issue 53): 8 characters or fewer show as **** alone.
      expect(created).to.deep.include({ ...body, headers: { 'X-Team': '****', 'X-Env': '****' }, authConfig: { username: 'relay', password: '****9876' } });
    });

    it('derives the slug from the name and suffixes it when taken', async () => {
      const first = await createDestination({ name: 'My Shop (EU)', url: 'https://shop.example.com' });
      const second = await createDestination({ name: 'My Shop (EU)', url: 'https://shop.example.com' });
      expect(first.slug).to.equal('my-shop-eu');
      expect(second.slug).to.equal('my-shop-eu-1');
    });

    it('gives concurrent creates of one name without a slug distinct derived slugs, all 201', async () => {
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => h.api('POST', '/api/destinations', { body: { name: 'Race Target', url: 'https://race.example.com' } })),
      );
      expect(responses.map((r) => r.status)).to.deep.equal([201, 201, 201, 201, 201, 201]);
      expect(responses.map((r) => r.body.slug)).to.have.members(['race-target', 'race-target-1', 'race-target-2', 'race-target-3', 'race-target-4', 'race-target-5']);
    });

    it('answers 409 DUPLICATE_SLUG for an explicit slug already in use, and creates nothing', async () => {
      await createDestination({ name: 'Slugged', slug: 'taken-destination', url: 'https://one.example.com' });
      const response = await h.api('POST', '/api/destinations', { body: { name: 'Other', slug: 'taken-destination', url: 'https://two.example.com' } });
      expect(response.status).to.equal(409);
      expect(response.body).to.include({ error: 'Conflict', code: 'DUPLICATE_SLUG' });
      expect((await h.api('GET', '/api/destinations?search=two.example.com')).body.pagination.total).to.equal(0);
    });

    it('ignores read-only fields, so a fetched destination POSTed back creates a copy', async () => {
      const original = await createDestination({ name: 'Clonable', url: 'https://clone.example.com', headers: { 'X-A': '1' }, timeoutMs: 5000 });
      const fetched = (await h.api('GET', `/api/destinations/${original.id}`)).body;
      // Header values are masked secrets: a copy is given them in clear, as it would be given credentials.
      const copy = await createDestination({ ...fetched, headers: { 'X-A': '1' }, slug: 'clonable-copy', deliveriesCount: 7, successRate: 50 });
      const omit = ({ id, slug, createdAt, updatedAt, ...rest }: Record<string, unknown>) => rest;
      expect(omit(copy)).to.deep.equal(omit(fetched));
      expect(copy.id).not.to.equal(original.id);
    });

    it('refuses a masked credential as a real one: 400 VALIDATION_ERROR naming the field, nothing created', async () => {
      const original = await createDestination({ name: 'Masked clone', url: 'https://masked-clone.example.com', authType: 'bearer', authConfig: { token: TOKEN } });
      const fetched = (await h.api('GET', `/api/destinations/${original.id}`)).body;
      const response = await h.api('POST', '/api/destinations', { body: { ...fetched, slug: 'masked-clone-copy' } });
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.details.map((d: { field: string }) => d.field)).to.include('authConfig.token');
      expect((await h.api('GET', '/api/destinations?search=masked-clone')).body.pagination.total).to.equal(1);
    });
  });

  describe('GET /api/destinations/:id', () => {
    it('returns the same destination that POST returned', async () => {
      const created = await createDestination({ name: 'Fetched', url: 'https://fetched.example.com', authType: 'api_key', authConfig: { headerName: 'X-Api-Key', key: 'api-key-plaintext-1111' } });
      const response = await h.api('GET', `/api/destinations/${created.id}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal(created);
      expect(response.body.authConfig).to.deep.equal({ headerName: 'X-Api-Key', key: '****1111' });
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('GET', '/api/destinations/dst_00000000000000000000000000');
      expect(response.status).to.equal(404);
      expect(response.body).to.include({ error: 'Not Found', code: 'RESOURCE_NOT_FOUND' });
    });
  });

  describe('PATCH /api/destinations/:id', () => {
    it('answers 200 and changes only the fields provided; headers replace the whole map', async () => {
      const created = await createDestination({ name: 'Patchable', url: 'https://p.example.com', headers: { 'X-Old': '1', 'X-Keep': '2' }, timeoutMs: 2000 });
      const body = { name: 'Patched', url: 'https://q.example.com/new', description: 'now described', headers: { 'X-New': '3' }, enabled: false };
      const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body });
      expect(response.status).to.equal(200);
      const disabled = { disabledReason: 'manual', disabledAt: response.body.updatedAt };
      expect(response.body).to.deep.equal({ ...created, ...body, headers: { 'X-New': '****' }, ...disabled, updatedAt: response.body.updatedAt });
      expect((await h.api('GET', `/api/destinations/${created.id}`)).body).to.deep.equal(response.body);
    });

    it('keeps the credentials when authType is repeated unchanged without authConfig', async () => {
      const created = await createDestination({ name: 'Same type', url: 'https://same.example.com', authType: 'bearer', authConfig: { token: TOKEN } });
      const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { authType: 'bearer', name: 'Same type renamed' } });
      expect(response.status, response.text).to.equal(200);
      expect(response.body.authConfig).to.deep.equal({ token: '****5432' });
      expect(JSON.parse(h.unseal(await sealedAuth(created.id)))).to.deep.equal({ token: TOKEN });
    });

    it('merges a partial retryPolicy with the current policy: the fields left out keep their values', async () => {
      const created = await createDestination({ name: 'Retry patch', url: 'https://r.example.com', retryPolicy: { maxRetries: 2, backoffMultiplier: 3 } });
      const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { retryPolicy: { initialDelay: 500 } } });
      expect(response.status, response.text).to.equal(200);
      expect(response.body.retryPolicy).to.deep.equal({ ...DEFAULT_RETRY_POLICY, maxRetries: 2, backoffMultiplier: 3, initialDelay: 500 });
      expect((await h.api('GET', `/api/destinations/${created.id}`)).body.retryPolicy).to.deep.equal(response.body.retryPolicy);
    });

    it('replaces the policy with a full retryPolicy', async () => {
      const created = await createDestination({ name: 'Retry full', url: 'https://rf.example.com', retryPolicy: { maxRetries: 2, backoffMultiplier: 3 } });
      const full = { maxRetries: 7, initialDelay: 250, maxDelay: 9000, backoffMultiplier: 1.5 };
      const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { retryPolicy: full } });
      expect(response.body.retryPolicy).to.deep.equal(full);
    });

    it('checks the bounds on the merged policy: 400 VALIDATION_ERROR on retryPolicy.maxDelay, and nothing changes', async () => {
      const created = await createDestination({ name: 'Retry bounds', url: 'https://rb.example.com', retryPolicy: { initialDelay: 2000, maxDelay: 5000 } });
      // 6000 is within the field's own bounds, but above the current maxDelay it would be kept with.
      const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { retryPolicy: { initialDelay: 6000 }, name: 'Renamed' } });
      expect(response.status, response.text).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.details).to.deep.include({ field: 'retryPolicy.maxDelay', message: 'maxDelay must be at least initialDelay' });
      expect((await h.api('GET', `/api/destinations/${created.id}`)).body).to.deep.equal(created);
    });

    it('refuses an unknown or out-of-bounds field of a partial retryPolicy', async () => {
      const created = await createDestination({ name: 'Retry fields', url: 'https://rx.example.com' });
      for (const retryPolicy of [{ maxRetries: 21 }, { jitter: 0.5 }, { backoffMultiplier: '2' }]) {
        const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { retryPolicy } });
        expect(response.status, JSON.stringify(retryPolicy)).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      }
    });

    it('accepts the fetched destination sent back unchanged and keeps its real credentials', async () => {
      const created = await createDestination({ name: 'Round trip', url: 'https://rt.example.com', authType: 'basic', authConfig: { username: 'u', password: PASSWORD } });
      const fetched = (await h.api('GET', `/api/destinations/${created.id}`)).body;
      const response = await h.api('PATCH', `/api/destinations/${created.id}`, { body: fetched });
      expect(response.status, response.text).to.equal(200);
      expect({ ...response.body, updatedAt: fetched.updatedAt }).to.deep.equal(fetched);
      expect(JSON.parse(h.unseal(await sealedAuth(created.id)))).to.deep.equal({ username: 'u', password: PASSWORD });
    });

    it('changes the credentials when new ones are given, and clears them when authType becomes none', async () => {
      const created = await createDestination({ name: 'Auth change', url: 'https://auth.example.com', authType: 'basic', authConfig: { username: 'u', password: PASSWORD } });
      const bearer = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { authType: 'bearer', authConfig: { token: TOKEN } } });
      expect(bearer.body).to.include({ authType: 'bearer' });
      expect(bearer.body.authConfig).to.deep.equal({ token: '****5432' });
      expect(JSON.parse(h.unseal(await sealedAuth(created.id)))).to.deep.equal({ token: TOKEN });
      const none = await h.api('PATCH', `/api/destinations/${created.id}`, { body: { authType: 'none' } });
      expect(none.body).to.deep.include({ authType: 'none', authConfig: {} });
      expect((await h.rawRow('destinations', created.id))!.auth_config_sealed).to.equal(null);
    });

    it('answers 409 DUPLICATE_SLUG when the new slug belongs to another destination, and changes nothing', async () => {
      await createDestination({ name: 'Holder', slug: 'slug-holder', url: 'https://holder.example.com' });
      const mover = await createDestination({ name: 'Mover', slug: 'slug-mover', url: 'https://mover.example.com' });
      const response = await h.api('PATCH', `/api/destinations/${mover.id}`, { body: { slug: 'slug-holder', name: 'Moved' } });
      expect(response.status).to.equal(409);
      expect(response.body.code).to.equal('DUPLICATE_SLUG');
      expect((await h.api('GET', `/api/destinations/${mover.id}`)).body).to.deep.equal(mover);
    });

    it('disabling by hand says disabledReason "manual" with disabledAt; enabling clears both', async () => {
      const { id } = await createDestination({ name: 'Toggled', url: 'https://toggled.example.com' });
      const disabled = await h.api('PATCH', `/api/destinations/${id}`, { body: { enabled: false } });
      expect(disabled.status).to.equal(200);
      expect(disabled.body).to.include({ enabled: false, disabledReason: 'manual' });
      expect(disabled.body.disabledAt).to.match(ISO);
      const enabled = await h.api('PATCH', `/api/destinations/${id}`, { body: { enabled: true } });
      expect(enabled.body).to.include({ enabled: true, disabledReason: null, disabledAt: null });
    });

    it('keeps the reason of a destination already disabled when it is disabled again', async () => {
      const { id } = await createDestination({ name: 'Gone one', url: 'https://gone.example.com' });
      await h.relay.store.sql.run(`UPDATE destinations SET enabled = ?, disabled_reason = 'gone', disabled_at = 5 WHERE id = ?`, [h.relay.store.sql.bool(false), id]);
      const patched = await h.api('PATCH', `/api/destinations/${id}`, { body: { enabled: false, description: 'still gone' } });
      expect(patched.body).to.include({ enabled: false, disabledReason: 'gone', disabledAt: new Date(5).toISOString() });
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('PATCH', '/api/destinations/dst_00000000000000000000000000', { body: { name: 'x' } });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('DELETE /api/destinations/:id', () => {
    it('answers 204 with no body, after which the destination is gone', async () => {
      const created = await createDestination({ name: 'Doomed', url: 'https://doomed.example.com' });
      const response = await h.api('DELETE', `/api/destinations/${created.id}`);
      expect(response.status).to.equal(204);
      expect(response.text).to.equal('');
      expect((await h.api('GET', `/api/destinations/${created.id}`)).status).to.equal(404);
      expect((await h.api('DELETE', `/api/destinations/${created.id}`)).body.code).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('GET /api/destinations', () => {
    const specs = [
      { name: 'Catalog Alpha', url: 'https://alpha.catalog.test/in', enabled: true },
      { name: 'Catalog Beta', url: 'https://beta.catalog.test/in', enabled: false },
      { name: 'Catalog Gamma', url: 'https://gamma.catalog.test/in', enabled: true },
    ];
    let listed: { id: string }[];

    before(async () => {
      listed = [];
      for (const spec of specs) listed.push(await createDestination({ ...spec, authType: 'bearer', authConfig: { token: TOKEN } }));
    });

    it('returns summaries with exactly id, name, url, enabled, successRate, avgLatency and deliveriesCount', async () => {
      const response = await h.api('GET', '/api/destinations?search=alpha.catalog');
      expect(response.status).to.equal(200);
      expect(Object.keys(response.body.data[0])).to.have.members(SUMMARY_KEYS);
      expect(response.body.data).to.deep.equal([
        { id: listed[0]!.id, name: 'Catalog Alpha', url: 'https://alpha.catalog.test/in', enabled: true, successRate: null, avgLatency: null, deliveriesCount: 0 },
      ]);
    });

    it('lists newest first with total, page and pageSize', async () => {
      const first = await h.api('GET', '/api/destinations?search=catalog&pageSize=2');
      expect(first.body.pagination).to.deep.equal({ total: 3, page: 1, pageSize: 2 });
      expect(first.body.data.map((d: { name: string }) => d.name)).to.deep.equal(['Catalog Gamma', 'Catalog Beta']);
      const second = await h.api('GET', '/api/destinations?search=catalog&pageSize=2&page=2');
      expect(second.body.data.map((d: { name: string }) => d.name)).to.deep.equal(['Catalog Alpha']);
    });

    it('clamps a pageSize above 100 to 100', async () => {
      const response = await h.api('GET', '/api/destinations?pageSize=101');
      expect(response.body.pagination).to.include({ page: 1, pageSize: 100 });
    });

    it('search matches the name or the URL, case-insensitively', async () => {
      const byName = await h.api('GET', '/api/destinations?search=CATALOG%20beta');
      expect(byName.body.data.map((d: { id: string }) => d.id)).to.deep.equal([listed[1]!.id]);
      const byUrl = await h.api('GET', '/api/destinations?search=GAMMA.catalog.test');
      expect(byUrl.body.data.map((d: { id: string }) => d.id)).to.deep.equal([listed[2]!.id]);
    });

    it('enabled=true and enabled=false filter on the enabled flag', async () => {
      const enabled = await h.api('GET', '/api/destinations?search=catalog&enabled=true');
      expect(enabled.body.data.map((d: { name: string }) => d.name)).to.deep.equal(['Catalog Gamma', 'Catalog Alpha']);
      const disabled = await h.api('GET', '/api/destinations?search=catalog&enabled=false');
      expect(disabled.body.data.map((d: { name: string }) => d.name)).to.deep.equal(['Catalog Beta']);
    });

    it('shows no credentials and no signing secret', async () => {
      const response = await h.api('GET', '/api/destinations?search=catalog');
      expect(response.text).not.to.include(TOKEN);
      expect(response.text).not.to.include('whsec_');
    });
  });

  describe('credentials', () => {
    const cases: { authType: string; authConfig: Record<string, string>; secretField: string }[] = [
      { authType: 'basic', authConfig: { username: 'svc', password: PASSWORD }, secretField: 'password' },
      { authType: 'bearer', authConfig: { token: TOKEN }, secretField: 'token' },
      { authType: 'api_key', authConfig: { headerName: 'X-Api-Key', key: 'api-key-plaintext-2222' }, secretField: 'key' },
      { authType: 'custom_header', authConfig: { headerName: 'X-Auth', headerValue: 'header-value-plaintext-3333' }, secretField: 'headerValue' },
    ];
    for (const { authType, authConfig, secretField } of cases) {
      const secret = authConfig[secretField]!;

      it(`${authType}: ${secretField} is masked as **** + last 4 in create, get, patch and list responses`, async () => {
        const created = await h.api('POST', '/api/destinations', { body: { name: `Cred ${authType}`, url: `https://${authType.replace('_', '-')}.cred.test`, authType, authConfig } });
        expect(created.body.authConfig).to.deep.equal({ ...authConfig, [secretField]: `****${secret.slice(-4)}` });
        const responses = [
          created,
          await h.api('GET', `/api/destinations/${created.body.id}`),
          await h.api('PATCH', `/api/destinations/${created.body.id}`, { body: { description: 'patched' } }),
          await h.api('GET', '/api/destinations?search=cred.test'),
        ];
        for (const response of responses) expect(response.text).not.to.include(secret);
      });

      it(`${authType}: the credentials are encrypted at rest`, async () => {
        const created = await createDestination({ name: `At rest ${authType}`, url: 'https://at-rest.example.com', authType, authConfig });
        const row = (await h.rawRow('destinations', created.id))!;
        expect(JSON.stringify(row)).not.to.include(secret);
        expect(JSON.parse(h.unseal(String(row.auth_config_sealed)))).to.deep.equal(authConfig);
      });
    }
  });

  describe('signing secret', () => {
    it('GET /signing-secret answers exactly {secret}, the same on every read and in no other response', async () => {
      const created = await createDestination({ name: 'Signed', url: 'https://signed.example.com' });
      const first = await h.api('GET', `/api/destinations/${created.id}/signing-secret`);
      expect(first.status).to.equal(200);
      expect(Object.keys(first.body)).to.deep.equal(['secret']);
      expect(first.body.secret).to.match(SIGNING_SECRET);
      expect((await h.api('GET', `/api/destinations/${created.id}/signing-secret`)).body).to.deep.equal(first.body);
      expect((await h.api('GET', `/api/destinations/${created.id}`)).text).not.to.include(first.body.secret);
      expect(JSON.stringify(created)).not.to.include(first.body.secret);
    });

    it('is encrypted at rest', async () => {
      const created = await createDestination({ name: 'Signed at rest', url: 'https://signed.example.com' });
      const { secret } = (await h.api('GET', `/api/destinations/${created.id}/signing-secret`)).body;
      const row = (await h.rawRow('destinations', created.id))!;
      expect(JSON.stringify(row)).not.to.include(secret);
      expect(h.unseal(String(row.signing_secret_sealed))).to.equal(secret);
    });

    it('POST /rotate-signing-secret answers 200 with a new secret, which replaces the old one', async () => {
      const created = await createDestination({ name: 'Rotated', url: 'https://rotated.example.com' });
      const oldSecret = (await h.api('GET', `/api/destinations/${created.id}/signing-secret`)).body.secret;
      const sealedBefore = (await h.rawRow('destinations', created.id))!.signing_secret_sealed;
      const rotated = await h.api('POST', `/api/destinations/${created.id}/rotate-signing-secret`);
      expect(rotated.status).to.equal(200);
      expect(Object.keys(rotated.body)).to.have.members(['secret', 'message']);
      expect(rotated.body.secret).to.match(SIGNING_SECRET).and.not.equal(oldSecret);
      expect((await h.api('GET', `/api/destinations/${created.id}/signing-secret`)).body).to.deep.equal({ secret: rotated.body.secret });
      expect((await h.rawRow('destinations', created.id))!.signing_secret_sealed).not.to.equal(sealedBefore);
    });

    it('POST /rotate-signing-secret with graceSeconds signs with both secrets, new first, for exactly the grace; again during it drops the oldest; the janitor deletes it after', async () => {
      const { id } = await createDestination({ name: 'Overlapped', url: 'https://overlapped.example.com' });
      const first = (await h.api('GET', `/api/destinations/${id}/signing-secret`)).body.secret as string;
      const before = Date.now();
      const rotated = await h.api('POST', `/api/destinations/${id}/rotate-signing-secret`, { body: { graceSeconds: 60 } });
      expect(rotated.status, rotated.text).to.equal(200);
      const expiresAt = Date.parse(rotated.body.previousSecretExpiresAt);
      expect(expiresAt).to.be.within(before + 60_000, Date.now() + 60_000);
      const row = (await h.rawRow('destinations', id))!;
      expect(h.unseal(String(row.previous_signing_secret_sealed))).to.equal(first);

      const lookup = createStoreDeliveryLookup(h.relay.store, h.secrets);
      const orgId = String(row.org_id);
      // Signed at a given instant (the deliverer's clock); each library checks its signature at once.
      const signedAt = async (nowMs: number) => {
        const target = (await lookup.destination(orgId, id))!;
        const request = buildDeliveryRequest({ destination: target.destination, event: { eventId: 'evt_1', sourceId: 'src_1', rawBody: Buffer.from('{"n":1}'), providerHeaders: {}, signatureValid: true }, deliveryId: 'dlv_1', attemptNumber: 1, nowMs });
        return { headers: request.headers, verifies: (secret: string) => {
          try {
            new Webhook(secret).verify(request.body, request.headers);
            return true;
          } catch {
            return false;
          }
        } };
      };
      const during = await signedAt(expiresAt - 1);
      expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);
      expect([during.verifies(rotated.body.secret), during.verifies(first)]).to.deep.equal([true, true]);
      // New first: the first signature alone is the new secret's.
      const [newest] = String(during.headers['webhook-signature']).split(' ');
      expect(new Webhook(rotated.body.secret).verify('{"n":1}', { ...during.headers, 'webhook-signature': newest! })).to.deep.equal({ n: 1 });
      const after = await signedAt(expiresAt);
      expect(String(after.headers['webhook-signature']).split(' ')).to.have.length(1);
      expect([after.verifies(rotated.body.secret), after.verifies(first)]).to.deep.equal([true, false]);

      const again = await h.api('POST', `/api/destinations/${id}/rotate-signing-secret`, { body: { graceSeconds: 60 } });
      const third = await signedAt(Date.parse(again.body.previousSecretExpiresAt) - 1);
      expect([third.verifies(again.body.secret), third.verifies(rotated.body.secret), third.verifies(first)]).to.deep.equal([true, true, false]);

      expect(await deleteExpiredPreviousSigningSecrets(h.relay.store.sql, Date.parse(again.body.previousSecretExpiresAt) - 1)).to.equal(0);
      expect(await deleteExpiredPreviousSigningSecrets(h.relay.store.sql, Date.parse(again.body.previousSecretExpiresAt))).to.be.at.least(1);
      expect((await h.rawRow('destinations', id))!).to.include({ previous_signing_secret_sealed: null, previous_signing_secret_expires_at: null });
    });

    it('POST /rotate-signing-secret without a grace ends the old secret at once, and refuses a grace out of 0..604800', async () => {
      const { id } = await createDestination({ name: 'Cut over', url: 'https://cut-over.example.com' });
      const rotated = await h.api('POST', `/api/destinations/${id}/rotate-signing-secret`, { body: { graceSeconds: 0 } });
      expect(Object.keys(rotated.body)).to.have.members(['secret', 'message']);
      expect((await h.rawRow('destinations', id))!.previous_signing_secret_sealed).to.equal(null);
      for (const graceSeconds of [-1, 604_801, 1.5]) {
        const refused = await h.api('POST', `/api/destinations/${id}/rotate-signing-secret`, { body: { graceSeconds } });
        expect(refused.status, String(graceSeconds)).to.equal(400);
        expect(refused.body.code).to.equal('VALIDATION_ERROR');
      }
    });

    it('answers 404 RESOURCE_NOT_FOUND on both endpoints for an unknown id', async () => {
      for (const [method, path] of [
        ['GET', '/api/destinations/dst_00000000000000000000000000/signing-secret'],
        ['POST', '/api/destinations/dst_00000000000000000000000000/rotate-signing-secret'],
      ] as const) {
        const response = await h.api(method, path);
        expect(response.status, path).to.equal(404);
        expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      }
    });
  });
});
