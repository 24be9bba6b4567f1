import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MASKED = /^\*{4}[A-Za-z0-9+/=]{4}$/;
const SUMMARY_KEYS = ['id', 'name', 'slug', 'webhookUrl', 'enabled', 'eventsCount'];
const PLAIN_SECRET = 'codehost-secret-plaintext-0001';

describeEachStore('Sources API', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  const createSource = (body: Record<string, unknown>) => created(h.api, '/api/sources', body);

  describe('POST /api/sources', () => {
    it('answers 201 with the created source and every spec default filled in', async () => {
      const response = await h.api('POST', '/api/sources', { body: { name: 'Plain', slug: 'plain' } });
      expect(response.status).to.equal(201);
      const { id, createdAt, updatedAt, ...rest } = response.body;
      expect(id).to.match(/^src_[0-9a-z]{26}$/);
      expect(createdAt).to.match(ISO);
      expect(updatedAt).to.equal(createdAt);
      expect(rest).to.deep.equal({
        name: 'Plain',
        slug: 'plain',
        description: null,
        provider: null,
        webhookUrl: 'https://relay.example.test/ingest/org-a/plain',
        verificationConfig: { type: 'none' },
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
        enabled: true,
        eventsCount: 0,
        lastEventAt: null,
      });
    });

    it('keeps every optional field it is given', async () => {
      const body = {
        name: 'Everything',
        slug: 'everything',
        description: 'all fields set',
        provider: 'custom',
        verificationConfig: { type: 'hmac', secret: 'hmac-secret-value-0001', algorithm: 'sha512', header: 'X-Sig', encoding: 'base64', prefix: 'v1=' },
        rejectInvalidSignatures: true,
        rateLimitPerMinute: 600,
        ipFilterMode: 'allowlist',
        ipAllowlist: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'],
        ipDenylist: ['203.0.113.9'],
        encryptFields: ['$.card.number'],
        maskFields: ['$.email'],
        dedupEnabled: true,
        dedupStrategy: 'idempotency_key',
        dedupWindowHours: 168,
        dedupCustomHeader: 'Idempotency-Key',
        enabled: false,
      };
      const created = await createSource(body);
      expect(created).to.deep.include({ ...body, verificationConfig: { ...body.verificationConfig, secret: '****0001' } });
    });

    it('stores IP rules without surrounding whitespace', async () => {
      const created = await createSource({ name: 'Spaced', slug: 'spaced-ips', ipFilterMode: 'denylist', ipDenylist: [' 192.0.2.1 ', '10.0.0.0/8\t'] });
      expect(created.ipDenylist).to.deep.equal(['192.0.2.1', '10.0.0.0/8']);
    });

    it('with a signing provider and no secret, verifies that way with a generated secret, shown only masked', async () => {
      const created = await createSource({ name: 'Code host', slug: 'codehost-generated', provider: 'codehost' });
      expect(created.verificationConfig).to.deep.equal({ type: 'codehost', toleranceSeconds: 300, secret: created.verificationConfig.secret });
      expect(created.verificationConfig.secret).to.match(MASKED);
      const stored = await h.rawRow('sources', created.id);
      expect(h.unseal(String(stored!.secret_sealed))).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    });

    it('answers 409 DUPLICATE_SLUG for a slug the organization already uses, and creates nothing', async () => {
      await createSource({ name: 'First', slug: 'taken-slug' });
      const response = await h.api('POST', '/api/sources', { body: { name: 'Second', slug: 'taken-slug' } });
      expect(response.status).to.equal(409);
      expect(response.body).to.include({ error: 'Conflict', code: 'DUPLICATE_SLUG' });
      expect(response.body.message).to.include('taken-slug');
      const list = await h.api('GET', '/api/sources?search=taken-slug');
      expect(list.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['First']);
    });

    it('of concurrent creates with one slug, exactly one answers 201 and the others 409 DUPLICATE_SLUG', async () => {
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) => h.api('POST', '/api/sources', { body: { name: `Racer ${i}`, slug: 'race-slug' } })),
      );
      expect(responses.map((r) => r.status).sort()).to.deep.equal([201, 409, 409, 409, 409, 409]);
      for (const r of responses.filter((r) => r.status === 409)) expect(r.body.code).to.equal('DUPLICATE_SLUG');
      expect((await h.api('GET', '/api/sources?search=race-slug')).body.pagination.total).to.equal(1);
    });

    it('ignores read-only fields, so a fetched source POSTed back with a new slug creates a copy with a fresh secret', async () => {
      const original = await createSource({ name: 'Original', slug: 'clone-original', provider: 'payments', maskFields: ['$.card'] });
      const fetched = (await h.api('GET', `/api/sources/${original.id}`)).body;
      const copy = await createSource({ ...fetched, slug: 'clone-copy', eventsCount: 99, lastEventAt: '2020-01-01T00:00:00.000Z' });
      expect(copy.id).not.to.equal(original.id);
      expect(copy.webhookUrl).to.equal('https://relay.example.test/ingest/org-a/clone-copy');
      expect(copy.eventsCount).to.equal(0);
      expect(copy.lastEventAt).to.equal(null);
      const omit = ({ id, slug, webhookUrl, createdAt, updatedAt, verificationConfig, ...rest }: Record<string, unknown>) => rest;
      expect(omit(copy)).to.deep.equal(omit(fetched));
      // The masked value is never taken as a secret: the copy got a real one of its own.
      const copySecret = h.unseal(String((await h.rawRow('sources', copy.id))!.secret_sealed));
      const originalSecret = h.unseal(String((await h.rawRow('sources', original.id))!.secret_sealed));
      expect(copySecret).to.match(/^whsec_/);
      expect(copySecret).not.to.equal(originalSecret);
    });
  });

  describe('GET /api/sources/:id', () => {
    it('returns the same source that POST returned', async () => {
      const created = await createSource({ name: 'Fetch me', slug: 'fetch-me', provider: 'chat' });
      const response = await h.api('GET', `/api/sources/${created.id}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal(created);
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('GET', '/api/sources/src_00000000000000000000000000');
      expect(response.status).to.equal(404);
      expect(response.body).to.include({ error: 'Not Found', code: 'RESOURCE_NOT_FOUND' });
    });
  });

  describe('PATCH /api/sources/:id', () => {
    it('answers 200 and changes only the fields provided', async () => {
      const created = await createSource({ name: 'Before', slug: 'patch-only-given', description: 'kept', rateLimitPerMinute: 60 });
      const response = await h.api('PATCH', `/api/sources/${created.id}`, { body: { name: 'After', enabled: false } });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ ...created, name: 'After', enabled: false, updatedAt: response.body.updatedAt });
      expect((await h.api('GET', `/api/sources/${created.id}`)).body).to.deep.equal(response.body);
    });

    it('accepts the fetched source sent back unchanged and keeps its real secret', async () => {
      const created = await createSource({
        name: 'Round trip',
        slug: 'patch-round-trip',
        verificationConfig: { type: 'codehost', secret: PLAIN_SECRET },
      });
      const sealedBefore = (await h.rawRow('sources', created.id))!.secret_sealed;
      const fetched = (await h.api('GET', `/api/sources/${created.id}`)).body;
      const response = await h.api('PATCH', `/api/sources/${created.id}`, { body: fetched });
      expect(response.status, response.text).to.equal(200);
      expect({ ...response.body, updatedAt: fetched.updatedAt }).to.deep.equal(fetched);
      const sealedAfter = String((await h.rawRow('sources', created.id))!.secret_sealed);
      expect(sealedAfter).to.equal(sealedBefore);
      expect(h.unseal(sealedAfter)).to.equal(PLAIN_SECRET);
    });

    it('keeps the secret when verificationConfig keeps its type and omits the secret', async () => {
      const created = await createSource({ name: 'Keep', slug: 'patch-keep-secret', verificationConfig: { type: 'chat', secret: PLAIN_SECRET } });
      const response = await h.api('PATCH', `/api/sources/${created.id}`, { body: { verificationConfig: { type: 'chat', toleranceSeconds: 60 } } });
      expect(response.status).to.equal(200);
      expect(response.body.verificationConfig).to.deep.equal({ type: 'chat', toleranceSeconds: 60, secret: '****0001' });
      expect(h.unseal(String((await h.rawRow('sources', created.id))!.secret_sealed))).to.equal(PLAIN_SECRET);
    });

    it('accepts the slug repeated unchanged, but answers 400 for a different slug and changes nothing', async () => {
      const created = await createSource({ name: 'Fixed slug', slug: 'immutable-slug' });
      const same = await h.api('PATCH', `/api/sources/${created.id}`, { body: { slug: 'immutable-slug', name: 'Renamed' } });
      expect(same.status).to.equal(200);
      expect(same.body.slug).to.equal('immutable-slug');
      const changed = await h.api('PATCH', `/api/sources/${created.id}`, { body: { slug: 'another-slug', name: 'Sneaky' } });
      expect(changed.status).to.equal(400);
      expect(changed.body.code).to.equal('VALIDATION_ERROR');
      expect(changed.body.details).to.deep.include({ field: 'slug', message: 'is immutable after creation' });
      expect((await h.api('GET', `/api/sources/${created.id}`)).body).to.deep.equal(same.body);
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('PATCH', '/api/sources/src_00000000000000000000000000', { body: { name: 'x' } });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('DELETE /api/sources/:id', () => {
    it('answers 204 with no body, after which the source is gone', async () => {
      const created = await createSource({ name: 'Doomed', slug: 'doomed' });
      const response = await h.api('DELETE', `/api/sources/${created.id}`);
      expect(response.status).to.equal(204);
      expect(response.text).to.equal('');
      expect((await h.api('GET', `/api/sources/${created.id}`)).status).to.equal(404);
      expect((await h.api('DELETE', `/api/sources/${created.id}`)).body.code).to.equal('RESOURCE_NOT_FOUND');
    });

    it('frees the slug for a new source', async () => {
      const created = await createSource({ name: 'Reused', slug: 'reused-slug' });
      await h.api('DELETE', `/api/sources/${created.id}`);
      await createSource({ name: 'Reused again', slug: 'reused-slug' });
    });
  });

  describe('GET /api/sources', () => {
    const names = ['List Alpha', 'List Beta', 'List Gamma', 'List Delta', 'List Epsilon'];
    let listed: { id: string; name: string }[];

    before(async () => {
      listed = [];
      for (const [index, name] of names.entries()) {
        listed.push(await createSource({ name, slug: `listed-${index}`, enabled: index % 2 === 0, provider: 'codehost' }));
      }
    });

    it('returns summaries with exactly id, name, slug, webhookUrl, enabled and eventsCount', async () => {
      const response = await h.api('GET', '/api/sources?search=listed-0');
      expect(response.status).to.equal(200);
      expect(response.body.data).to.have.length(1);
      expect(Object.keys(response.body.data[0])).to.have.members(SUMMARY_KEYS);
      expect(response.body.data[0]).to.deep.equal({
        id: listed[0]!.id,
        name: 'List Alpha',
        slug: 'listed-0',
        webhookUrl: 'https://relay.example.test/ingest/org-a/listed-0',
        enabled: true,
        eventsCount: 0,
      });
    });

    it('lists newest first with total, page and pageSize', async () => {
      const first = await h.api('GET', '/api/sources?search=listed-&pageSize=2');
      expect(first.body.pagination).to.deep.equal({ total: 5, page: 1, pageSize: 2 });
      expect(first.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['List Epsilon', 'List Delta']);
      const last = await h.api('GET', '/api/sources?search=listed-&pageSize=2&page=3');
      expect(last.body.pagination).to.deep.equal({ total: 5, page: 3, pageSize: 2 });
      expect(last.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['List Alpha']);
      const beyond = await h.api('GET', '/api/sources?search=listed-&pageSize=2&page=4');
      expect(beyond.body).to.deep.equal({ data: [], pagination: { total: 5, page: 4, pageSize: 2 } });
    });

    it('defaults to page 1 of 20 and clamps a pageSize above 100 to 100, however large', async () => {
      expect((await h.api('GET', '/api/sources')).body.pagination).to.include({ page: 1, pageSize: 20 });
      for (const pageSize of ['500', '99999999999999999999', '1'.repeat(400)]) {
        const clamped = await h.api('GET', `/api/sources?pageSize=${pageSize}`);
        expect(clamped.status, pageSize).to.equal(200);
        expect(clamped.body.pagination).to.include({ page: 1, pageSize: 100 });
      }
    });

    it('search matches the name or the slug, case-insensitively', async () => {
      const byName = await h.api('GET', '/api/sources?search=list%20GAMMA');
      expect(byName.body.data.map((s: { id: string }) => s.id)).to.deep.equal([listed[2]!.id]);
      const bySlug = await h.api('GET', '/api/sources?search=LISTED-3');
      expect(bySlug.body.data.map((s: { id: string }) => s.id)).to.deep.equal([listed[3]!.id]);
      const none = await h.api('GET', '/api/sources?search=no-such-thing-anywhere');
      expect(none.body).to.deep.equal({ data: [], pagination: { total: 0, page: 1, pageSize: 20 } });
    });

    it('treats % and _ in search as plain characters', async () => {
      const response = await h.api('GET', '/api/sources?search=listed_%25');
      expect(response.body.pagination.total).to.equal(0);
    });

    it('enabled=true and enabled=false filter on the enabled flag', async () => {
      const enabled = await h.api('GET', '/api/sources?search=listed-&enabled=true');
      expect(enabled.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['List Epsilon', 'List Gamma', 'List Alpha']);
      const disabled = await h.api('GET', '/api/sources?search=listed-&enabled=false');
      expect(disabled.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['List Delta', 'List Beta']);
      expect(disabled.body.pagination.total).to.equal(2);
    });

    it('shows no secret at all', async () => {
      const response = await h.api('GET', '/api/sources?search=listed-');
      expect(response.text).not.to.include('whsec_');
      expect(response.text).not.to.include('verificationConfig');
    });
  });

  describe('POST /api/sources/:id/rotate-secret', () => {
    it('answers 200 with exactly {id, verificationConfig: {type, secret}, message}, the new secret in clear', async () => {
      const created = await createSource({ name: 'Rotating', slug: 'rotate-shape', provider: 'payments' });
      const response = await h.api('POST', `/api/sources/${created.id}/rotate-secret`);
      expect(response.status).to.equal(200);
      expect(Object.keys(response.body)).to.have.members(['id', 'verificationConfig', 'message']);
      expect(response.body.id).to.equal(created.id);
      expect(Object.keys(response.body.verificationConfig)).to.have.members(['type', 'secret']);
      expect(response.body.verificationConfig.type).to.equal('payments');
      expect(response.body.verificationConfig.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(response.body.message).to.be.a('string').and.not.equal('');
    });

    it('replaces the stored secret, after which the new one is only ever shown masked as **** and its last 4', async () => {
      const created = await createSource({ name: 'Replaced', slug: 'rotate-replaces', verificationConfig: { type: 'codehost', secret: PLAIN_SECRET } });
      const sealedBefore = (await h.rawRow('sources', created.id))!.secret_sealed;
      const rotated = await h.api('POST', `/api/sources/${created.id}/rotate-secret`);
      const secret: string = rotated.body.verificationConfig.secret;
      const sealedAfter = String((await h.rawRow('sources', created.id))!.secret_sealed);
      expect(sealedAfter).not.to.equal(sealedBefore);
      expect(h.unseal(sealedAfter)).to.equal(secret);
      expect(sealedAfter).not.to.include(secret);

      const fetched = await h.api('GET', `/api/sources/${created.id}`);
      expect(fetched.body.verificationConfig.secret).to.equal(`****${secret.slice(-4)}`);
      const patched = await h.api('PATCH', `/api/sources/${created.id}`, { body: { description: 'after rotation' } });
      const listed = await h.api('GET', '/api/sources?search=rotate-replaces');
      for (const response of [fetched, patched, listed]) {
        expect(response.text).not.to.include(secret);
        expect(response.text).not.to.include(PLAIN_SECRET);
      }
    });

    it('takes no body: an empty application/json body is accepted', async () => {
      const created = await createSource({ name: 'Empty body', slug: 'rotate-empty-body', provider: 'chat' });
      const response = await h.api('POST', `/api/sources/${created.id}/rotate-secret`, { rawBody: '', headers: { 'content-type': 'application/json' } });
      expect(response.status, response.text).to.equal(200);
      expect(response.body.verificationConfig.type).to.equal('chat');
    });

    it('answers 400 for a source that verifies nothing, so has no secret', async () => {
      const created = await createSource({ name: 'No verification', slug: 'rotate-none' });
      const response = await h.api('POST', `/api/sources/${created.id}/rotate-secret`);
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect((await h.rawRow('sources', created.id))!.secret_sealed).to.equal(null);
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('POST', '/api/sources/src_00000000000000000000000000/rotate-secret');
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('verification secrets', () => {
    it('are masked in the create, get, patch and list responses', async () => {
      const created = await h.api('POST', '/api/sources', {
        body: { name: 'Masked', slug: 'masked-everywhere', verificationConfig: { type: 'payments', secret: PLAIN_SECRET } },
      });
      expect(created.body.verificationConfig).to.deep.equal({ type: 'payments', secret: '****0001', toleranceSeconds: 300 });
      const responses = [
        created,
        await h.api('GET', `/api/sources/${created.body.id}`),
        await h.api('PATCH', `/api/sources/${created.body.id}`, { body: { name: 'Masked still' } }),
        await h.api('GET', '/api/sources?search=masked-everywhere'),
      ];
      for (const response of responses) expect(response.text).not.to.include(PLAIN_SECRET);
    });

    it('are encrypted at rest: the stored row holds no plaintext', async () => {
      const created = await createSource({
        name: 'At rest',
        slug: 'secret-at-rest',
        verificationConfig: { type: 'hmac', secret: PLAIN_SECRET, algorithm: 'sha256', header: 'X-Signature', encoding: 'hex' },
      });
      const row = (await h.rawRow('sources', created.id))!;
      expect(JSON.stringify(row)).not.to.include(PLAIN_SECRET);
      expect(String(row.secret_sealed)).to.match(/^v1:/);
      expect(h.unseal(String(row.secret_sealed))).to.equal(PLAIN_SECRET);
    });
  });
});
