import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

describeEachBackend('route filters', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  const suite = useRelayHarness(target);

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 4);
  });

  let sources = 0;
  /** A source with one route per filter, each to a sink of its own. */
  async function filteredSource(filters: (object | null)[]) {
    const { api } = suite.harness;
    sources += 1;
    const source = await api('POST', '/api/sources', { body: { name: `Filtered ${sources}`, slug: `filtered-${sources}` } });
    const routes: { id: string; destinationId: string; sink: Awaited<ReturnType<typeof suite.sink>> }[] = [];
    for (const [index, filter] of filters.entries()) {
      const sink = await suite.sink([respond(200)]);
      const destination = await api('POST', '/api/destinations', { body: { name: `Filtered ${sources}-${index}`, url: sink.url } });
      const route = await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id, filter } });
      expect(route.status, route.text).to.equal(201);
      routes.push({ id: route.body.id, destinationId: destination.body.id, sink });
    }
    return { slug: source.body.slug as string, routes };
  }

  async function ingest(slug: string, body: string, options: { query?: string; headers?: Record<string, string> } = {}) {
    const response = await suite.harness.send(`/ingest/default/${slug}${options.query ?? ''}`, body, { 'content-type': 'application/json', ...options.headers });
    expect(response.status, response.text).to.equal(200);
    return response.body.eventId as string;
  }

  const settled = (eventId: string) =>
    waitFor(`event ${eventId} to settle`, async () => {
      const event = await suite.harness.api('GET', `/api/events/${eventId}`);
      return event.status === 200 && event.body.status !== 'pending' ? event.body : undefined;
    }, isDefined, settleMs);

  it('delivers only to the routes whose filters match body, headers, query and path, and lists the others under filteredRouteIds', async () => {
    const { slug, routes } = await filteredSource([
      { body: { type: 'order.created', amount: { $gte: 100 } } },
      { headers: { 'x-shop-env': 'prod' }, query: { region: 'eu' } },
      { path: { $endsWith: '/nowhere' } },
      null,
    ]);
    const eventId = await ingest(slug, '{"type":"order.created","amount":150}', { query: '?region=eu', headers: { 'x-shop-env': 'prod' } });
    const event = await settled(eventId);
    expect(event).to.include({ status: 'delivered', deliveriesCount: 3 });
    expect(event.filteredRouteIds).to.deep.equal([routes[2]!.id]);
    for (const index of [0, 1, 3]) await routes[index]!.sink.waitForRequests(1, settleMs);
    expect(routes[2]!.sink.requests).to.have.length(0);
  });

  it('an event every route filters out ends delivered with 0 deliveries', async () => {
    const { slug, routes } = await filteredSource([{ body: { type: 'order.created' } }, { body: { amount: { $gt: 1000 } } }]);
    const eventId = await ingest(slug, '{"type":"order.paid","amount":5}');
    const event = await settled(eventId);
    expect(event).to.include({ status: 'delivered', deliveriesCount: 0 });
    expect(event.filteredRouteIds).to.have.members(routes.map((route) => route.id));
  });

  it('POST /api/filters/test matches a stored event (with its query and path) or a sample, and answers 400 for a bad filter', async () => {
    const { slug } = await filteredSource([null]);
    const eventId = await ingest(slug, '{"type":"refund.created"}', { query: '?env=staging' });
    await settled(eventId);
    const test = (body: object) => suite.harness.api('POST', '/api/filters/test', { body });
    expect((await test({ filter: { body: { type: { $startsWith: 'refund.' } }, query: { env: 'staging' }, path: `/ingest/default/${slug}` }, eventId })).body).to.deep.equal({
      matched: true,
    });
    expect((await test({ filter: { query: { env: 'prod' } }, eventId })).body).to.deep.equal({ matched: false });
    expect((await test({ filter: { headers: { 'x-kind': 'a' } }, sample: { body: {}, headers: { 'X-Kind': 'a' } } })).body).to.deep.equal({ matched: true });
    const bad = await test({ filter: { body: { a: { $regex: '.*' } } }, sample: { body: {} } });
    expect(bad.status).to.equal(400);
    expect(bad.body.details).to.deep.include({ field: 'filter.body.a.$regex', message: bad.body.details[0].message });
    expect((await test({ filter: {}, eventId: 'evt_00000000000000000000000000' })).status).to.equal(404);
    expect((await test({ filter: {} })).status).to.equal(400);
  });

  it('applies the filters again when an event is replayed to its routes', async () => {
    const { slug, routes } = await filteredSource([{ body: { tier: 'gold' } }, null]);
    const eventId = await ingest(slug, '{"tier":"silver"}');
    await settled(eventId);
    await routes[1]!.sink.waitForRequests(1, settleMs);
    // Now the filtered route would take it; the other route stops taking it.
    await suite.harness.api('PATCH', `/api/routes/${routes[0]!.id}`, { body: { filter: { body: { tier: 'silver' } } } });
    await suite.harness.api('PATCH', `/api/routes/${routes[1]!.id}`, { body: { filter: { body: { tier: 'gold' } } } });
    const replay = await suite.harness.api('POST', `/api/events/${eventId}/replay`);
    expect(replay.status).to.equal(202);
    expect(replay.body.deliveriesCreated).to.equal(1);
    await routes[0]!.sink.waitForRequests(1, settleMs);
    expect(routes[1]!.sink.requests).to.have.length(1);
  });
});
