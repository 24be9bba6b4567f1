import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../testing/api-harness.js';

const ENDPOINTS = [
  ['GET', '/api/sources'],
  ['POST', '/api/sources'],
  ['GET', '/api/sources/src_00000000000000000000000000'],
  ['PATCH', '/api/sources/src_00000000000000000000000000'],
  ['DELETE', '/api/sources/src_00000000000000000000000000'],
  ['POST', '/api/sources/src_00000000000000000000000000/rotate-secret'],
  ['GET', '/api/destinations'],
  ['POST', '/api/destinations'],
  ['GET', '/api/destinations/dst_00000000000000000000000000'],
  ['PATCH', '/api/destinations/dst_00000000000000000000000000'],
  ['DELETE', '/api/destinations/dst_00000000000000000000000000'],
  ['GET', '/api/destinations/dst_00000000000000000000000000/signing-secret'],
  ['POST', '/api/destinations/dst_00000000000000000000000000/rotate-signing-secret'],
  ['GET', '/api/routes'],
  ['POST', '/api/routes'],
  ['GET', '/api/routes/rte_00000000000000000000000000'],
  ['PATCH', '/api/routes/rte_00000000000000000000000000'],
  ['DELETE', '/api/routes/rte_00000000000000000000000000'],
] as const;

/** The Authorization header sent (none when null) and why it must be refused. */
const REFUSED_CREDENTIALS: { title: string; authorization: string | null }[] = [
  { title: 'no Authorization header', authorization: null },
  { title: 'an empty Bearer', authorization: 'Bearer ' },
  { title: 'a Basic scheme', authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` },
  { title: 'a key without the Bearer scheme', authorization: 'test-key-org-a-0123456789' },
  { title: 'two words after Bearer', authorization: 'Bearer test-key-org-a-0123456789 extra' },
  { title: 'an unknown key', authorization: 'Bearer rk_this-key-was-never-issued' },
  { title: "a known key's prefix", authorization: 'Bearer test-key-org-a-012345678' },
  { title: 'an over-long key', authorization: `Bearer ${'k'.repeat(5000)}` },
];

describeEachStore('API authentication', (target) => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, target);
  });

  after(async () => {
    await h?.stop();
  });

  for (const { title, authorization } of REFUSED_CREDENTIALS) {
    it(`with ${title}, every endpoint answers 401 {error, message, code: UNAUTHORIZED}`, async () => {
      for (const [method, path] of ENDPOINTS) {
        const headers: Record<string, string> = authorization === null ? {} : { authorization };
        const body = method === 'POST' || method === 'PATCH' ? { name: 'unauthorized', slug: 'unauthorized', url: 'https://x.example.com' } : undefined;
        const response = await h.api(method, path, { key: null, headers, body });
        expect(response.status, `${method} ${path}`).to.equal(401);
        expect(Object.keys(response.body)).to.have.members(['error', 'message', 'code']);
        expect(response.body).to.include({ error: 'Unauthorized', code: 'UNAUTHORIZED' });
        expect(response.body.message).to.be.a('string').and.not.equal('');
      }
      const list = await h.api('GET', '/api/sources');
      expect(list.body.pagination.total).to.equal(0);
    });
  }

  it('accepts the scheme in any case', async () => {
    const response = await h.api('GET', '/api/sources', { key: null, headers: { authorization: `bearer ${h.keyA}` } });
    expect(response.status).to.equal(200);
  });

  it('accepts a key created for the organization', async () => {
    const org = await h.relay.store.organizations.bySlug('org-a');
    const { key } = await h.relay.store.apiKeys.create(org!.id, 'second', 'admin');
    const response = await h.api('GET', '/api/sources', { key });
    expect(response.status).to.equal(200);
  });
});
