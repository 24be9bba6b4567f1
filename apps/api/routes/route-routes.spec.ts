import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

const ROUTE_KEYS = ['id', 'sourceId', 'destinationId', 'enabled', 'filter', 'transformationId', 'delaySeconds', 'createdAt'];
const UNKNOWN_ROUTE = 'rte_00000000000000000000000000';
/**
 * The bound on a source's enabled routes this suite runs with: the mechanism is the same at any bound, and
 * the config spec checks the default of 100 (reaching 100 here took 40 s of the fast suite).
 */
const MAX_ROUTES = 10;

describeEachStore('Routes API', (target) => {
  let h: ApiHarness;
  let slugs = 0;

  before(async function () {
    h = await startApiHarness(this, target, { env: { RELAY_MAX_ROUTES_PER_SOURCE: String(MAX_ROUTES) } });
  });

  after(async () => {
    await h?.stop();
  });

  const newSource = () => created(h.api, '/api/sources', { name: 'Route source', slug: `route-source-${(slugs += 1)}` });
  const newDestination = () => created(h.api, '/api/destinations', { name: 'Route destination', url: 'https://route.example.com' });
  const newRoute = (sourceId: string, destinationId: string, extra: Record<string, unknown> = {}) =>
    created(h.api, '/api/routes', { sourceId, destinationId, ...extra });

  describe('POST /api/routes', () => {
    it('answers 201 with exactly {id, sourceId, destinationId, enabled, filter, transformationId, delaySeconds, createdAt}, enabled, unfiltered, untransformed and undelayed by default', async () => {
      const [source, destination] = [await newSource(), await newDestination()];
      const route = await newRoute(source.id, destination.id);
      expect(Object.keys(route)).to.have.members(ROUTE_KEYS);
      expect(route).to.include({ sourceId: source.id, destinationId: destination.id, enabled: true, filter: null, transformationId: null, delaySeconds: 0 });
      expect(route.id).to.match(/^rte_[0-9a-z]{26}$/);
      expect(route.createdAt).to.match(/^\d{4}-\d{2}-\d{2}T/);
    });

    it('creates a disabled route when asked to', async () => {
      const route = await newRoute((await newSource()).id, (await newDestination()).id, { enabled: false });
      expect(route.enabled).to.equal(false);
    });

    it('answers 409 DUPLICATE_ROUTE for a second route between the same pair, and creates nothing', async () => {
      const [source, destination] = [await newSource(), await newDestination()];
      await newRoute(source.id, destination.id);
      const response = await h.api('POST', '/api/routes', { body: { sourceId: source.id, destinationId: destination.id } });
      expect(response.status).to.equal(409);
      expect(response.body).to.include({ error: 'Conflict', code: 'DUPLICATE_ROUTE' });
      expect((await h.api('GET', `/api/routes?sourceId=${source.id}`)).body.pagination.total).to.equal(1);
    });

    it('answers 404 RESOURCE_NOT_FOUND when the source or the destination does not exist', async () => {
      const [source, destination] = [await newSource(), await newDestination()];
      for (const body of [
        { sourceId: 'src_00000000000000000000000000', destinationId: destination.id },
        { sourceId: source.id, destinationId: 'dst_00000000000000000000000000' },
      ]) {
        const response = await h.api('POST', '/api/routes', { body });
        expect(response.status).to.equal(404);
        expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      }
      expect((await h.api('GET', `/api/routes?sourceId=${source.id}`)).body.pagination.total).to.equal(0);
    });
  });

  describe('filter', () => {
    const FILTER = { body: { type: { $startsWith: 'order.' }, amount: { $gte: 100 } }, $or: [{ headers: { 'x-env': 'prod' } }, { query: { env: 'prod' } }] };

    it('is stored and returned as given, changed with PATCH and removed with null', async () => {
      const route = await newRoute((await newSource()).id, (await newDestination()).id, { filter: FILTER });
      expect(route.filter).to.deep.equal(FILTER);
      expect((await h.api('GET', `/api/routes/${route.id}`)).body.filter).to.deep.equal(FILTER);
      const changed = await h.api('PATCH', `/api/routes/${route.id}`, { body: { filter: { path: { $endsWith: '/shop' } } } });
      expect(changed.body).to.include({ enabled: true });
      expect(changed.body.filter).to.deep.equal({ path: { $endsWith: '/shop' } });
      const removed = await h.api('PATCH', `/api/routes/${route.id}`, { body: { filter: null } });
      expect(removed.body.filter).to.equal(null);
    });

    for (const [fault, filter, field] of [
      ['an unknown operator', { body: { amount: { $between: [1, 2] } } }, 'filter.body.amount.$between'],
      ['a wrong operand type', { $or: [{ body: { a: 1 } }, { body: { amount: { $gt: 'x', $in: 'vip' } } }] }, 'filter.$or[1].body.amount.$in'],
      ['a filter nested deeper than 10 levels', { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: { k: 1 } } } } } } } } } } }, 'filter.a.b.c.d.e.f.g.h.i.j'],
      ['a filter larger than 10 KB', { body: { $in: Array.from({ length: 1500 }, (_, n) => `value-${n}`) } }, 'filter'],
      ['a filter that is not an object', 'type = order', 'filter'],
    ] as const) {
      it(`answers 400 VALIDATION_ERROR naming the path of the fault for ${fault}, and creates or changes nothing`, async () => {
        const [source, destination] = [await newSource(), await newDestination()];
        const response = await h.api('POST', '/api/routes', { body: { sourceId: source.id, destinationId: destination.id, filter } });
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
        expect(response.body.details.map((detail: { field: string }) => detail.field)).to.include(field);
        expect((await h.api('GET', `/api/routes?sourceId=${source.id}`)).body.pagination.total).to.equal(0);
        const route = await newRoute(source.id, destination.id);
        const patched = await h.api('PATCH', `/api/routes/${route.id}`, { body: { filter } });
        expect(patched.status).to.equal(400);
        expect((await h.api('GET', `/api/routes/${route.id}`)).body.filter).to.equal(null);
      });
    }
  });

  describe('GET /api/routes/:id', () => {
    it('returns the route that POST returned', async () => {
      const route = await newRoute((await newSource()).id, (await newDestination()).id);
      const response = await h.api('GET', `/api/routes/${route.id}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal(route);
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('GET', `/api/routes/${UNKNOWN_ROUTE}`);
      expect(response.status).to.equal(404);
      expect(response.body).to.include({ error: 'Not Found', code: 'RESOURCE_NOT_FOUND' });
    });
  });

  describe('PATCH /api/routes/:id', () => {
    it('answers 200 and switches enabled', async () => {
      const route = await newRoute((await newSource()).id, (await newDestination()).id);
      const off = await h.api('PATCH', `/api/routes/${route.id}`, { body: { enabled: false } });
      expect(off.status).to.equal(200);
      expect(off.body).to.deep.equal({ ...route, enabled: false });
      expect((await h.api('GET', `/api/routes/${route.id}`)).body.enabled).to.equal(false);
    });

    it('accepts the fetched route sent back with enabled changed', async () => {
      const route = await newRoute((await newSource()).id, (await newDestination()).id);
      const response = await h.api('PATCH', `/api/routes/${route.id}`, { body: { ...route, enabled: false } });
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({ ...route, enabled: false });
    });

    it('answers 400 for an attempt to move the route to another source, and changes nothing', async () => {
      const route = await newRoute((await newSource()).id, (await newDestination()).id);
      const other = await newSource();
      const response = await h.api('PATCH', `/api/routes/${route.id}`, { body: { sourceId: other.id, enabled: false } });
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.details.map((d: { field: string }) => d.field)).to.include('sourceId');
      expect((await h.api('GET', `/api/routes/${route.id}`)).body).to.deep.equal(route);
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('PATCH', `/api/routes/${UNKNOWN_ROUTE}`, { body: { enabled: false } });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('DELETE /api/routes/:id', () => {
    it('answers 204 with no body, after which the route is gone and its ends remain', async () => {
      const [source, destination] = [await newSource(), await newDestination()];
      const route = await newRoute(source.id, destination.id);
      const response = await h.api('DELETE', `/api/routes/${route.id}`);
      expect(response.status).to.equal(204);
      expect(response.text).to.equal('');
      expect((await h.api('GET', `/api/routes/${route.id}`)).status).to.equal(404);
      expect((await h.api('GET', `/api/sources/${source.id}`)).status).to.equal(200);
      expect((await h.api('GET', `/api/destinations/${destination.id}`)).status).to.equal(200);
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id', async () => {
      const response = await h.api('DELETE', `/api/routes/${UNKNOWN_ROUTE}`);
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('GET /api/routes', () => {
    let source: Record<string, any>;
    let routes: Record<string, any>[];

    before(async () => {
      source = await newSource();
      routes = [];
      for (let i = 0; i < 3; i += 1) routes.push(await newRoute(source.id, (await newDestination()).id));
    });

    it('filters by sourceId, newest first, with total, page and pageSize', async () => {
      const response = await h.api('GET', `/api/routes?sourceId=${source.id}&pageSize=2`);
      expect(response.status).to.equal(200);
      expect(response.body.pagination).to.deep.equal({ total: 3, page: 1, pageSize: 2 });
      expect(response.body.data.map((r: { id: string }) => r.id)).to.deep.equal([routes[2]!.id, routes[1]!.id]);
      expect(Object.keys(response.body.data[0])).to.have.members(ROUTE_KEYS);
    });

    it('filters by destinationId', async () => {
      const response = await h.api('GET', `/api/routes?destinationId=${routes[1]!.destinationId}`);
      expect(response.body.data.map((r: { id: string }) => r.id)).to.deep.equal([routes[1]!.id]);
    });

    it('clamps a pageSize above 100 to 100', async () => {
      expect((await h.api('GET', '/api/routes?pageSize=1000')).body.pagination).to.include({ page: 1, pageSize: 100 });
    });
  });

  describe('deleting an end of a route', () => {
    it('deleting the source removes its routes, and leaves its destinations and their other routes', async () => {
      const [doomed, kept, destination] = [await newSource(), await newSource(), await newDestination()];
      const doomedRoute = await newRoute(doomed.id, destination.id);
      const keptRoute = await newRoute(kept.id, destination.id);
      expect((await h.api('DELETE', `/api/sources/${doomed.id}`)).status).to.equal(204);
      expect((await h.api('GET', `/api/routes/${doomedRoute.id}`)).status).to.equal(404);
      const remaining = await h.api('GET', `/api/routes?destinationId=${destination.id}`);
      expect(remaining.body.data.map((r: { id: string }) => r.id)).to.deep.equal([keptRoute.id]);
      expect((await h.rawRow('routes', doomedRoute.id))).to.equal(undefined);
    });

    it('deleting the destination removes its routes, and leaves its sources and their other routes', async () => {
      const [source, doomed, kept] = [await newSource(), await newDestination(), await newDestination()];
      const doomedRoute = await newRoute(source.id, doomed.id);
      const keptRoute = await newRoute(source.id, kept.id);
      expect((await h.api('DELETE', `/api/destinations/${doomed.id}`)).status).to.equal(204);
      expect((await h.api('GET', `/api/routes/${doomedRoute.id}`)).status).to.equal(404);
      const remaining = await h.api('GET', `/api/routes?sourceId=${source.id}`);
      expect(remaining.body.data.map((r: { id: string }) => r.id)).to.deep.equal([keptRoute.id]);
      expect((await h.rawRow('routes', doomedRoute.id))).to.equal(undefined);
    });
  });
  describe(`at most ${MAX_ROUTES} enabled routes per source (RELAY_MAX_ROUTES_PER_SOURCE)`, () => {
    /** A source with `count` enabled routes, each to a destination of its own. */
    async function sourceWithRoutes(count: number) {
      const source = await newSource();
      const routes = [];
      for (let n = 0; n < count; n += 1) routes.push(await newRoute(source.id, (await newDestination()).id));
      return { source, routes };
    }

    const expectLimitReached = (response: { status: number; body: { code: string; message: string } }) => {
      expect(response.status, JSON.stringify(response.body)).to.equal(409);
      expect(response.body.code).to.equal('LIMIT_REACHED');
      expect(response.body.message).to.include('RELAY_MAX_ROUTES_PER_SOURCE');
    };
    const routeCount = async (sourceId: string) => (await h.api('GET', `/api/routes?sourceId=${sourceId}&pageSize=1`)).body.pagination.total as number;

    it(`answers 409 LIMIT_REACHED for route ${MAX_ROUTES + 1} of a source and creates nothing; a disabled one may still be made`, async () => {
      const { source } = await sourceWithRoutes(MAX_ROUTES);
      const destination = await newDestination();
      expectLimitReached(await h.api('POST', '/api/routes', { body: { sourceId: source.id, destinationId: destination.id } }));
      expect(await routeCount(source.id)).to.equal(MAX_ROUTES);
      const parked = await newRoute(source.id, destination.id, { enabled: false });
      expect(parked.enabled).to.equal(false);
      // Another source is not held by this one's routes.
      expect((await newRoute((await newSource()).id, destination.id)).enabled).to.equal(true);
    });

    it('answers 409 LIMIT_REACHED when enabling a route past the bound, and enables it once another is disabled', async () => {
      const { source, routes } = await sourceWithRoutes(MAX_ROUTES);
      const parked = await newRoute(source.id, (await newDestination()).id, { enabled: false });
      expectLimitReached(await h.api('PATCH', `/api/routes/${parked.id}`, { body: { enabled: true, filter: { body: { type: 'x' } } } }));
      expect((await h.api('GET', `/api/routes/${parked.id}`)).body).to.include({ enabled: false, filter: null });
      // Changing an enabled route's filter, or sending it back enabled, is no new route.
      expect((await h.api('PATCH', `/api/routes/${routes[0]!.id}`, { body: { enabled: true, filter: { body: { type: 'y' } } } })).status).to.equal(200);
      expect((await h.api('PATCH', `/api/routes/${routes[1]!.id}`, { body: { enabled: false } })).status).to.equal(200);
      const enabled = await h.api('PATCH', `/api/routes/${parked.id}`, { body: { enabled: true, filter: { body: { type: 'x' } } } });
      expect(enabled.status, enabled.text).to.equal(200);
      expect(enabled.body).to.deep.include({ enabled: true, filter: { body: { type: 'x' } } });
    });

    it('lets exactly one of several concurrent creates take the last place', async () => {
      const { source } = await sourceWithRoutes(MAX_ROUTES - 1);
      const destinations = [];
      for (let n = 0; n < 5; n += 1) destinations.push(await newDestination());
      const answers = await Promise.all(destinations.map((d) => h.api('POST', '/api/routes', { body: { sourceId: source.id, destinationId: d.id } })));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([201, 409, 409, 409, 409]);
      for (const refused of answers.filter((a) => a.status === 409)) expectLimitReached(refused);
      expect(await routeCount(source.id)).to.equal(MAX_ROUTES);
    });
  });
});
