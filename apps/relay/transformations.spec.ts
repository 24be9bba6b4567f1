import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

describeEachBackend('transformations', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  const suite = useRelayHarness(target);

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 4);
  });

  let sources = 0;
  /** A source with one route per entry, each to a sink of its own, with that route's transformation code, filter and delay. */
  async function transformedSource(routes: { code?: string; filter?: object; delaySeconds?: number }[]) {
    const { api } = suite.harness;
    sources += 1;
    const source = await api('POST', '/api/sources', { body: { name: `Transformed ${sources}`, slug: `transformed-${sources}` } });
    const made = [];
    for (const [index, route] of routes.entries()) {
      const sink = await suite.sink([respond(200)]);
      const destination = await api('POST', '/api/destinations', { body: { name: `Transformed ${sources}-${index}`, url: sink.url } });
      let transformationId: string | undefined;
      if (route.code) {
        const transformation = await api('POST', '/api/transformations', { body: { name: `Transformation ${sources}-${index}`, code: route.code, env: { TAG: 'from-env' } } });
        expect(transformation.status, transformation.text).to.equal(201);
        transformationId = transformation.body.id;
      }
      const created = await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id, transformationId, filter: route.filter, delaySeconds: route.delaySeconds } });
      expect(created.status, created.text).to.equal(201);
      made.push({ id: created.body.id as string, destinationId: destination.body.id as string, sink });
    }
    return { slug: source.body.slug as string, routes: made };
  }

  async function ingest(slug: string, body: string) {
    const response = await suite.harness.send(`/ingest/default/${slug}`, body, { 'content-type': 'application/json', 'x-provider': 'shop' });
    expect(response.status, response.text).to.equal(200);
    return response.body.eventId as string;
  }

  const settled = (eventId: string) =>
    waitFor(`event ${eventId} to settle`, async () => {
      const event = await suite.harness.api('GET', `/api/events/${eventId}?includePayload=true&includeDeliveries=true`);
      return event.status === 200 && event.body.status !== 'pending' ? event.body : undefined;
    }, isDefined, settleMs);

  it('sends the transformed request, filters on it, counts a null result as filtered, and keeps the original event', async () => {
    const { slug, routes } = await transformedSource([
      { code: 'function transform(r, c) { console.log("seen", r.body.type); return { ...r, body: { kind: r.body.type, tag: c.env.TAG }, headers: { "x-transformed": "yes" } }; }', filter: { body: { kind: 'order.created' } } },
      { code: 'function transform(r) { return { ...r, body: "plain text", headers: { "content-type": "text/plain" } }; }' },
      { code: 'function transform() { return null; }' },
      { code: 'function transform(r) { return r; }', filter: { body: { kind: 'order.created' } } },
    ]);
    const eventId = await ingest(slug, '{"type":"order.created"}');
    const event = await settled(eventId);
    expect(event).to.include({ status: 'delivered', deliveriesCount: 2 });
    expect(event.filteredRouteIds).to.have.members([routes[2]!.id, routes[3]!.id]);
    expect(event.payload).to.deep.equal({ type: 'order.created' });

    const [json] = await routes[0]!.sink.waitForRequests(1, settleMs);
    expect(JSON.parse(json!.body.toString())).to.deep.equal({ kind: 'order.created', tag: 'from-env' });
    expect(json!.headers).to.include({ 'x-transformed': 'yes', 'content-type': 'application/json' });
    expect(json!.headers).not.to.have.property('x-provider');
    expect(json!.headers['webhook-id']).to.be.a('string');
    const [text] = await routes[1]!.sink.waitForRequests(1, settleMs);
    expect(text!.body.toString()).to.equal('plain text');
    expect(text!.headers['content-type']).to.equal('text/plain');

    const delivery = event.deliveries.find((d: { destinationId: string }) => d.destinationId === routes[0]!.destinationId);
    expect(delivery.transformation).to.deep.include({ error: null, logs: ['seen order.created'] });
  });

  it('fails the delivery of an infinite loop or an escape with the error and logs, and still delivers the other routes promptly', async () => {
    const { slug, routes } = await transformedSource([
      { code: 'function transform() { console.log("looping"); for (;;) {} }' },
      { code: "function transform(r) { const p = this.constructor.constructor('return process')(); return { ...r, body: p.env }; }" },
      {},
    ]);
    const eventId = await ingest(slug, '{"type":"order.created"}');
    await routes[2]!.sink.waitForRequests(1, settleMs);
    const event = await settled(eventId);
    expect(event).to.include({ status: 'partial', deliveriesCount: 3, deliveriesFailed: 2 });
    const byDestination = new Map(event.deliveries.map((d: { destinationId: string }) => [d.destinationId, d]));
    const loop = byDestination.get(routes[0]!.destinationId) as Record<string, unknown>;
    expect(loop).to.include({ status: 'failed', attemptCount: 0, failureReason: 'transformation_failed' });
    expect(loop.transformation).to.deep.include({ error: { name: 'TimeoutError', message: 'The transformation ran longer than 100 ms' }, logs: ['looping'] });
    const escape = byDestination.get(routes[1]!.destinationId) as Record<string, unknown>;
    expect(escape).to.include({ status: 'failed', attemptCount: 0, failureReason: 'transformation_failed' });
    expect((escape.transformation as { error: { name: string } }).error.name).to.equal('ReferenceError');
    expect(routes[0]!.sink.requests).to.have.length(0);
    expect(routes[1]!.sink.requests).to.have.length(0);
  });

  it("holds a delayed route's delivery until the event's receipt plus the delay, and the other route's not at all", async () => {
    const { slug, routes } = await transformedSource([{ delaySeconds: 1 }, {}]);
    const eventId = await ingest(slug, '{"type":"order.created"}');
    const [prompt] = await routes[1]!.sink.waitForRequests(1, settleMs);
    const [delayed] = await routes[0]!.sink.waitForRequests(1, settleMs);
    const event = await settled(eventId);
    const receivedAt = Date.parse(event.receivedAt);
    expect(delayed!.receivedAt).to.be.at.least(receivedAt + 1000);
    expect(prompt!.receivedAt).to.be.below(delayed!.receivedAt);
  });

  it("replays through the route's current transformation, to the route's destination and in bulk", async () => {
    const { slug, routes } = await transformedSource([{ code: 'function transform(r) { return { ...r, body: { version: 1 } }; }' }]);
    const { api } = suite.harness;
    const eventId = await ingest(slug, '{"type":"order.created"}');
    await routes[0]!.sink.waitForRequests(1, settleMs);
    const route = await api('GET', `/api/routes/${routes[0]!.id}`);
    const changed = await api('PATCH', `/api/transformations/${route.body.transformationId}`, { body: { code: 'function transform(r) { return { ...r, body: { version: 2 } }; }' } });
    expect(changed.status, changed.text).to.equal(200);

    expect((await api('POST', `/api/events/${eventId}/replay`, { body: { destinationIds: [routes[0]!.destinationId] } })).status).to.equal(202);
    const requests = await routes[0]!.sink.waitForRequests(2, settleMs);
    expect(JSON.parse(requests[1]!.body.toString())).to.deep.equal({ version: 2 });

    await api('PATCH', `/api/transformations/${route.body.transformationId}`, { body: { code: 'function transform() { throw new Error("no longer"); }' } });
    const bulk = await api('POST', '/api/events/bulk/replay', { body: { eventIds: [eventId] } });
    expect(bulk.body, bulk.text).to.include({ eventsQueued: 1, deliveriesCreated: 1 });
    const event = await settled(eventId);
    const failed = event.deliveries.filter((d: { failureReason?: string }) => d.failureReason === 'transformation_failed');
    expect(failed).to.have.length(1);
    expect(failed[0].transformation.error).to.deep.equal({ name: 'Error', message: 'no longer' });
    expect(routes[0]!.sink.requests).to.have.length(2);
  });
  it("delivers another organization's events while one organization's infinite loops and memory bombs are still being routed", async () => {
    const { slug, routes } = await transformedSource([
      { code: 'function transform() { for (;;) {} }' },
      { code: 'function transform() { const hoard = []; for (let n = 0; ; n++) hoard.push({ n, more: [n, n, n, n] }); }' },
    ]);
    const { relay, api } = suite.harness;
    sources += 1;
    const other = await relay.store.organizations.create(`other-${sources}`, 'pro');
    const { key } = await relay.store.apiKeys.create(other.id, 'test', 'admin');
    const otherSink = await suite.sink([respond(200)]);
    const created = async (path: string, body: object) => ((await api('POST', path, { key, body })).body as { id: string }).id;
    const otherSource = await created('/api/sources', { name: 'Other', slug: 'other' });
    await created('/api/routes', { sourceId: otherSource, destinationId: await created('/api/destinations', { name: 'Other receiver', url: otherSink.url }) });

    // 25 events at once, each with 100 ms of looping and a bomb that runs to the time or memory limit, all acknowledged before the other organization's first.
    const hostile = await Promise.all(Array.from({ length: 25 }, (_, n) => ingest(slug, JSON.stringify({ n }))));
    const others = [];
    for (let n = 0; n < 3; n += 1) {
      const answer = await suite.harness.send(`/ingest/${other.slug}/other`, JSON.stringify({ n }));
      expect(answer.status, answer.text).to.equal(200);
      others.push(answer.body.eventId as string);
    }
    await otherSink.waitForRequests(others.length, settleMs);
    const unsettled = await Promise.all(hostile.map(async (eventId) => (await api('GET', `/api/events/${eventId}`)).body.status as string | undefined));
    expect(unsettled.filter((status) => status !== 'failed'), 'the hostile events not yet routed when the other organization\'s were delivered').not.to.be.empty;

    // Every hostile event is still kept and fails its two deliveries, with nothing sent.
    for (const eventId of hostile) expect(await settled(eventId)).to.include({ status: 'failed', deliveriesFailed: 2 });
    expect(routes.flatMap((route) => route.sink.requests)).to.be.empty;
  });
});
