import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

describeEachStore('API keys and scopes', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  const newKey = async (scope: string, name = `${scope} key`) => created(h.api, '/api/keys', { name, scope });
  const keyCount = async () => (await h.api('GET', '/api/keys?pageSize=100')).body.pagination.total as number;

  describe('POST /api/keys', () => {
    it('answers 201 with the key shown once, its scope, its first 8 characters as prefix and no use yet', async () => {
      const key = await newKey('read', 'dashboard');
      expect(Object.keys(key)).to.have.members(['id', 'name', 'scope', 'prefix', 'createdAt', 'lastUsedAt', 'key']);
      expect(key).to.include({ name: 'dashboard', scope: 'read', prefix: key.key.slice(0, 8), lastUsedAt: null });
      expect(key.id).to.match(/^key_/);
      expect(key.key).to.match(/^rk_[A-Za-z0-9_-]{32}$/);
      const listed = (await h.api('GET', '/api/keys?pageSize=100')).body.data.find((row: { id: string }) => row.id === key.id);
      expect(listed).to.deep.equal({ id: key.id, name: 'dashboard', scope: 'read', prefix: key.prefix, createdAt: key.createdAt, lastUsedAt: null });
    });

    for (const [title, body, field] of [
      ['an unknown scope', { name: 'x', scope: 'superuser' }, 'scope'],
      ['no scope', { name: 'x' }, 'scope'],
      ['a name over 100 characters', { name: 'n'.repeat(101), scope: 'read' }, 'name'],
      ['an empty name', { name: '  ', scope: 'read' }, 'name'],
      ['an unknown field', { name: 'x', scope: 'read', expiresAt: 'never' }, 'expiresAt'],
    ] as const) {
      it(`answers 400 VALIDATION_ERROR naming the field for ${title}, and creates nothing`, async () => {
        const before = await keyCount();
        const response = await h.api('POST', '/api/keys', { body });
        expect(response.status, response.text).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
        expect(response.body.details.map((d: { field: string }) => d.field)).to.include(field);
        expect(await keyCount()).to.equal(before);
      });
    }
  });

  describe('GET /api/keys', () => {
    it("lists the organization's keys only, newest first, the bootstrap key as admin, never a key itself", async () => {
      await newKey('write', 'ci');
      const list = await h.api('GET', '/api/keys?pageSize=100');
      expect(list.status).to.equal(200);
      const names = list.body.data.map((row: { name: string }) => row.name);
      expect(names[0]).to.equal('ci');
      expect(list.body.data.find((row: { name: string }) => row.name === 'RELAY_API_KEY')).to.include({ scope: 'admin' });
      expect(list.text).not.to.include(h.keyA);
      const other = await h.apiB('GET', '/api/keys');
      expect(other.body.data.map((row: { name: string }) => row.name)).to.deep.equal(['test']);
    });

    it('shows when a key was last used', async () => {
      const key = await newKey('read', 'used');
      expect((await h.api('GET', '/api/sources', { key: key.key })).status).to.equal(200);
      const listed = (await h.api('GET', '/api/keys?pageSize=100')).body.data.find((row: { id: string }) => row.id === key.id);
      expect(listed.lastUsedAt).to.be.a('string');
    });
  });

  describe('scopes', () => {
    it('a read key may GET, and gets 403 FORBIDDEN for any write or key management, changing nothing', async () => {
      const { key } = await newKey('read');
      expect((await h.api('GET', '/api/sources', { key })).status).to.equal(200);
      expect((await h.api('GET', '/api/events', { key })).status).to.equal(200);
      const before = (await h.api('GET', '/api/sources')).body.pagination.total;
      for (const [method, path, body] of [
        ['POST', '/api/sources', { name: 'Nope', slug: 'nope' }],
        ['DELETE', '/api/sources/bulk', { ids: ['src_x'] }],
        ['POST', '/api/events/bulk/replay', { eventIds: ['evt_x'] }],
        ['GET', '/api/keys', undefined],
        ['POST', '/api/keys', { name: 'escalate', scope: 'admin' }],
      ] as const) {
        const response = await h.api(method, path, { key, body });
        expect(response.status, `${method} ${path}`).to.equal(403);
        expect(response.body).to.include({ error: 'Forbidden', code: 'FORBIDDEN' });
        expect(response.body.message).to.include('"read"');
      }
      expect((await h.api('GET', '/api/sources')).body.pagination.total).to.equal(before);
    });

    it('a write key may change resources but not manage keys', async () => {
      const { key } = await newKey('write');
      expect((await h.api('POST', '/api/sources', { key, body: { name: 'By a write key', slug: 'by-write-key' } })).status).to.equal(201);
      expect((await h.api('GET', '/api/keys', { key })).status).to.equal(403);
      expect((await h.api('POST', '/api/keys', { key, body: { name: 'escalate', scope: 'admin' } })).status).to.equal(403);
      const admin = await newKey('admin');
      expect((await h.api('DELETE', `/api/keys/${admin.id}`, { key })).status).to.equal(403);
    });

    it('any key may read itself at GET /api/keys/current, scope included', async () => {
      const reader = await newKey('read', 'console');
      const response = await h.api('GET', '/api/keys/current', { key: reader.key });
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ id: reader.id, name: 'console', scope: 'read', prefix: reader.prefix });
      expect(response.text).not.to.include(reader.key);
    });

    it('an admin key may manage keys', async () => {
      const { key } = await newKey('admin');
      expect((await h.api('GET', '/api/keys', { key })).status).to.equal(200);
    });
  });

  describe('DELETE /api/keys/{id}', () => {
    it('revokes at once: 204, then the key gets 401 and is no longer listed', async () => {
      const key = await newKey('write', 'leaked');
      expect((await h.api('GET', '/api/sources', { key: key.key })).status).to.equal(200);
      const response = await h.api('DELETE', `/api/keys/${key.id}`);
      expect(response.status).to.equal(204);
      expect(response.text).to.equal('');
      const refused = await h.api('GET', '/api/sources', { key: key.key });
      expect(refused.status).to.equal(401);
      expect(refused.body.code).to.equal('UNAUTHORIZED');
      const ids = (await h.api('GET', '/api/keys?pageSize=100')).body.data.map((row: { id: string }) => row.id);
      expect(ids).not.to.include(key.id);
    });

    it("answers 404 for another organization's key, which keeps working", async () => {
      const foreign = await created(h.apiB, '/api/keys', { name: 'b-only', scope: 'read' });
      const response = await h.api('DELETE', `/api/keys/${foreign.id}`);
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect((await h.api('GET', '/api/sources', { key: foreign.key })).status).to.equal(200);
    });

    it("answers 409 LAST_ADMIN_KEY for the organization's last admin key, which keeps working; another admin key lifts it", async () => {
      const onlyAdmin = (await h.apiB('GET', '/api/keys')).body.data.find((row: { scope: string }) => row.scope === 'admin');
      const refused = await h.apiB('DELETE', `/api/keys/${onlyAdmin.id}`);
      expect(refused.status).to.equal(409);
      expect(refused.body).to.include({ error: 'Conflict', code: 'LAST_ADMIN_KEY' });
      expect((await h.apiB('GET', '/api/keys')).status).to.equal(200);

      const second = await created(h.apiB, '/api/keys', { name: 'second admin', scope: 'admin' });
      expect((await h.apiB('DELETE', `/api/keys/${onlyAdmin.id}`)).status).to.equal(204);
      expect((await h.apiB('GET', '/api/keys')).status).to.equal(401);
      expect((await h.api('GET', '/api/keys', { key: second.key })).status).to.equal(200);
    });

    it('lets a key revoke itself when another admin key remains', async () => {
      const self = await newKey('admin', 'self');
      expect((await h.api('DELETE', `/api/keys/${self.id}`, { key: self.key })).status).to.equal(204);
      expect((await h.api('GET', '/api/keys', { key: self.key })).status).to.equal(401);
    });
  });
});
