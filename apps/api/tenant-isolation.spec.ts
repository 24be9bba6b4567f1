import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { createdId, startApiHarness, type ApiHarness } from '../../testing/api-harness.js';

interface OrgAResources {
  source: string;
  destination: string;
  route: string;
}

/** Every endpoint that addresses one resource by id, with a body that would change it if it were allowed. */
const BY_ID_ENDPOINTS: { method: string; path: string; resource: keyof OrgAResources; body?: unknown }[] = [
  { method: 'GET', path: '/api/sources/:id', resource: 'source' },
  { method: 'PATCH', path: '/api/sources/:id', resource: 'source', body: { name: 'hijacked', enabled: false } },
  { method: 'DELETE', path: '/api/sources/:id', resource: 'source' },
  { method: 'POST', path: '/api/sources/:id/rotate-secret', resource: 'source' },
  { method: 'GET', path: '/api/destinations/:id', resource: 'destination' },
  { method: 'PATCH', path: '/api/destinations/:id', resource: 'destination', body: { url: 'https://attacker.example.com' } },
  { method: 'DELETE', path: '/api/destinations/:id', resource: 'destination' },
  { method: 'GET', path: '/api/destinations/:id/signing-secret', resource: 'destination' },
  { method: 'POST', path: '/api/destinations/:id/rotate-signing-secret', resource: 'destination' },
  { method: 'GET', path: '/api/routes/:id', resource: 'route' },
  { method: 'PATCH', path: '/api/routes/:id', resource: 'route', body: { enabled: false } },
  { method: 'DELETE', path: '/api/routes/:id', resource: 'route' },
];

const LISTS = [
  { path: '/api/sources', resource: 'source' },
  { path: '/api/destinations', resource: 'destination' },
  { path: '/api/routes', resource: 'route' },
] as const;

describeEachStore('Tenant isolation', (target) => {
  let h: ApiHarness;
  let a: OrgAResources;
  let b: { source: string; destination: string };
  let snapshotBefore: Awaited<ReturnType<typeof snapshotOfA>>;

  /** Everything org A can see of its resources, plus what is stored behind the masks. */
  async function snapshotOfA() {
    return {
      source: (await h.api('GET', `/api/sources/${a.source}`)).body,
      destination: (await h.api('GET', `/api/destinations/${a.destination}`)).body,
      route: (await h.api('GET', `/api/routes/${a.route}`)).body,
      signingSecret: (await h.api('GET', `/api/destinations/${a.destination}/signing-secret`)).body,
      sourceRow: await h.rawRow('sources', a.source),
      destinationRow: await h.rawRow('destinations', a.destination),
      lists: await Promise.all(LISTS.map(async ({ path }) => (await h.api('GET', `${path}?pageSize=100`)).body)),
    };
  }

  before(async function () {
    h = await startApiHarness(this, target);
    const source = await createdId(h.api, '/api/sources', {
      name: 'A private source',
      slug: 'shared-slug',
      verificationConfig: { type: 'codehost', secret: 'org-a-verification-secret-0001' },
    });
    const destination = await createdId(h.api, '/api/destinations', {
      name: 'A private destination',
      url: 'https://a-private.example.com',
      authType: 'bearer',
      authConfig: { token: 'org-a-token-plaintext-0002' },
    });
    const route = await createdId(h.api, '/api/routes', { sourceId: source, destinationId: destination });
    a = { source, destination, route };
    b = {
      source: await createdId(h.apiB, '/api/sources', { name: 'B source', slug: 'b-source' }),
      destination: await createdId(h.apiB, '/api/destinations', { name: 'B destination', url: 'https://b.example.com' }),
    };
    snapshotBefore = await snapshotOfA();
  });

  after(async () => {
    await h?.stop();
  });

  for (const { method, path, resource, body } of BY_ID_ENDPOINTS) {
    it(`${method} ${path} with org B's key answers 404 RESOURCE_NOT_FOUND for org A's ${resource}`, async () => {
      const response = await h.apiB(method, path.replace(':id', a[resource]), body === undefined ? {} : { body });
      expect(response.status, response.text).to.equal(404);
      expect(response.body).to.include({ error: 'Not Found', code: 'RESOURCE_NOT_FOUND' });
      expect(response.text).not.to.include('org-a-');
    });
  }

  for (const { path, resource } of LISTS) {
    it(`GET ${path} with org B's key lists only org B's ${resource}s, none of org A's`, async () => {
      const response = await h.apiB('GET', `${path}?pageSize=100`);
      expect(response.status).to.equal(200);
      const ids = response.body.data.map((item: { id: string }) => item.id);
      expect(ids).not.to.include(a[resource]);
      if (resource !== 'route') expect(ids).to.deep.equal([b[resource]]);
      expect(response.body.pagination.total).to.equal(ids.length);
    });
  }

  it("GET /api/sources and /api/destinations with org B's key find nothing when searching for org A's names", async () => {
    for (const path of ['/api/sources?search=A%20private', '/api/destinations?search=a-private']) {
      expect((await h.apiB('GET', path)).body.pagination.total, path).to.equal(0);
    }
  });

  it("GET /api/routes with org B's key, filtered by org A's source or destination id, lists nothing", async () => {
    for (const query of [`sourceId=${a.source}`, `destinationId=${a.destination}`]) {
      expect((await h.apiB('GET', `/api/routes?${query}`)).body.data).to.deep.equal([]);
    }
  });

  const crossRoutes: { title: string; ends: () => { sourceId: string; destinationId: string } }[] = [
    { title: "org A's source to org B's destination", ends: () => ({ sourceId: a.source, destinationId: b.destination }) },
    { title: "org B's source to org A's destination", ends: () => ({ sourceId: b.source, destinationId: a.destination }) },
    { title: "org A's source to org A's destination", ends: () => ({ sourceId: a.source, destinationId: a.destination }) },
  ];
  for (const { title, ends } of crossRoutes) {
    it(`POST /api/routes with org B's key from ${title} answers 404 RESOURCE_NOT_FOUND and creates nothing`, async () => {
      const response = await h.apiB('POST', '/api/routes', { body: ends() });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect((await h.apiB('GET', '/api/routes')).body.pagination.total).to.equal(0);
    });
  }

  it("org B may use the slug of org A's source for its own: slugs are unique per organization only", async () => {
    const response = await h.apiB('POST', '/api/sources', { body: { name: 'B shares a slug', slug: 'shared-slug' } });
    expect(response.status).to.equal(201);
    expect(response.body.webhookUrl).to.equal('https://relay.example.test/ingest/org-b/shared-slug');
    expect((await h.apiB('DELETE', `/api/sources/${response.body.id}`)).status).to.equal(204);
  });

  it("org A's key answers 404 for org B's resources too", async () => {
    expect((await h.api('GET', `/api/sources/${b.source}`)).status).to.equal(404);
    expect((await h.api('GET', `/api/destinations/${b.destination}`)).status).to.equal(404);
  });

  it("after all of org B's attempts, org A's resources, secrets and lists are exactly as they were", async () => {
    expect(await snapshotOfA()).to.deep.equal(snapshotBefore);
  });
});
