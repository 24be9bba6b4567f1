import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedBroker } from '../../../libs/broker/embedded/embedded-broker.js';
import { UnavailableError } from '../../../libs/errors/errors.js';
import { hang, startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { expirePayloads, DAY_MS } from '../../../libs/ledger/retention.js';
import { createRouteTargets } from '../../../libs/routing/route-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination, createRoute, createSource, orgIds, recordTries, seedEvent, watchDestinationTopic, type SeededEvent } from '../../../testing/event-fixtures.js';
import { MAX_BULK_REPLAY_DELIVERIES, replayEvent } from './event-replay.js';
import { destinationTopic } from '../../../libs/pipeline/topology.js';

type Watcher = Awaited<ReturnType<typeof watchDestinationTopic>>;

describeEachStore('Event replay', (target) => {
  let h: ApiHarness;
  let sink: HttpSink;
  let org: { a: string; b: string };
  let sourceId: string;
  let unroutedSourceId: string;
  let d1: { id: string; name: string };
  let d2: { id: string; name: string };
  let d3: { id: string; name: string };
  let foreignDestination: string;
  const watchers: Record<string, Watcher> = {};
  const body = '{ "type": "invoice.paid",  "amount": 12345678901234567890 }';

  before(async function () {
    h = await startApiHarness(this, target);
    // Should a deliverer run in this relay, its requests wait here and change no delivery while tests run.
    sink = await startHttpSink([hang()]);
    org = await orgIds(h);
    sourceId = (await createSource(h, { name: 'Billing', slug: 'billing' })).id;
    unroutedSourceId = (await createSource(h, { name: 'Quiet', slug: 'quiet' })).id;
    const destination = (name: string) => createDestination(h, { name, url: `${sink.url}/${name}`, timeoutMs: 60000 });
    [d1, d2, d3] = [await destination('one'), await destination('two'), await destination('three')];
    await createRoute(h, sourceId, d1.id);
    await createRoute(h, sourceId, d2.id);
    await createRoute(h, sourceId, d3.id);
    const routes = await h.api('GET', `/api/routes?destinationId=${d3.id}`);
    await h.api('PATCH', `/api/routes/${routes.body.data[0].id}`, { body: { enabled: false } });
    foreignDestination = (await createDestination(h, { name: 'theirs', url: `${sink.url}/theirs` }, h.apiB)).id;
    for (const d of [d1, d2, d3]) watchers[d.id] = await watchDestinationTopic(h, d.id);
  });

  after(async () => {
    for (const watcher of Object.values(watchers)) await watcher.stop();
    await sink?.close();
    await h?.stop();
  });

  /** An event first delivered to d1 only. */
  async function deliveredEvent(extra: Partial<Parameters<typeof seedEvent>[1]> = {}): Promise<SeededEvent> {
    const event = await seedEvent(h, {
      orgId: org.a,
      sourceId,
      body,
      headers: { 'x-provider-event': 'inv_1' },
      signatureValid: false,
      targets: [{ destinationId: d1.id, destinationName: d1.name }],
      ...extra,
    });
    if (event.deliveries.length > 0) await recordTries(h, event, event.deliveries[0]!, [{ statusCode: 200, latencyMs: 10, startedAt: event.receivedAt + 10 }]);
    return event;
  }

  const deliveries = async (eventId: string) => (await h.api('GET', `/api/events/${eventId}/deliveries`)).body.data as { id: string; destinationId: string; status: string }[];
  const newDeliveries = async (event: SeededEvent) => (await deliveries(event.eventId)).filter((d) => !event.deliveries.some((old) => old.id === d.id));

  /** The relay's default RELAY_MAX_ROUTES_PER_SOURCE: one event is replayed to at most this many destinations. */
  const MAX_ROUTES = 100;
  const fanOut: string[] = [];
  /** `count` destinations of organization A with no routes, made once and shared by the tests that need many. */
  async function manyDestinations(count: number): Promise<string[]> {
    while (fanOut.length < count) fanOut.push((await createDestination(h, { name: `fan-${fanOut.length}`, url: `${sink.url}/fan-${fanOut.length}` })).id);
    return fanOut.slice(0, count);
  }

  function expectTooManyDestinations(response: { status: number; text: string; body: { code: string; message: string; details: { field: string }[] } }) {
    expect(response.status, response.text).to.equal(400);
    expect(response.body.code).to.equal('VALIDATION_ERROR');
    expect(response.body.message).to.include('RELAY_MAX_ROUTES_PER_SOURCE');
    expect(response.body.details.map((d) => d.field)).to.deep.equal(['destinationIds']);
  }

  describe('POST /api/events/:id/replay', () => {
    it('without a body, sends the event again to the destinations of its enabled routes: 202, new pending deliveries, event pending', async () => {
      const event = await deliveredEvent();
      expect((await h.api('GET', `/api/events/${event.eventId}`)).body.status).to.equal('delivered');
      const response = await h.api('POST', `/api/events/${event.eventId}/replay`);
      expect(response.status, response.text).to.equal(202);
      expect(response.body).to.have.keys('message', 'deliveriesCreated');
      expect(response.body.deliveriesCreated).to.equal(2);
      expect(response.body.message).to.be.a('string');
      const created = await newDeliveries(event);
      expect(created.map((d) => [d.destinationId, d.status])).to.have.deep.members([
        [d1.id, 'pending'],
        [d2.id, 'pending'],
      ]);
      const after = (await h.api('GET', `/api/events/${event.eventId}`)).body;
      expect(after).to.deep.include({ status: 'pending', deliveriesCount: 3 });
    });

    it('publishes one job per new delivery, carrying the stored body byte for byte and the event as received', async () => {
      const event = await deliveredEvent();
      await h.api('POST', `/api/events/${event.eventId}/replay`);
      for (const delivery of await newDeliveries(event)) {
        const { job, body: sent } = await watchers[delivery.destinationId]!.jobFor(delivery.id);
        expect(sent.toString()).to.equal(body);
        expect(job).to.deep.equal({
          deliveryId: delivery.id,
          eventId: event.eventId,
          orgId: org.a,
          sourceId,
          sourceSlug: 'billing',
          destinationId: delivery.destinationId,
          attemptNumber: 1,
          dueAt: 0,
          contentType: 'application/json',
          providerHeaders: { 'content-type': 'application/json', 'x-provider-event': 'inv_1' },
          signatureValid: false,
          receivedAt: event.receivedAt,
        });
      }
    });

    it('lets the recorder end the event by its new deliveries', async () => {
      const event = await deliveredEvent();
      await h.api('POST', `/api/events/${event.eventId}/replay`);
      const created = await newDeliveries(event);
      const seeded = { ...event, deliveries: created };
      const start = Date.now();
      await recordTries(h, seeded, created.find((d) => d.destinationId === d1.id)!, [{ statusCode: 200, latencyMs: 5, startedAt: start }]);
      expect((await h.api('GET', `/api/events/${event.eventId}`)).body.status).to.equal('pending');
      await recordTries(h, seeded, created.find((d) => d.destinationId === d2.id)!, [{ statusCode: 500, latencyMs: 5, startedAt: start }], { gaveUp: true });
      expect((await h.api('GET', `/api/events/${event.eventId}`)).body).to.deep.include({ status: 'partial', deliveriesCount: 3, deliveriesSucceeded: 2, deliveriesFailed: 1 });
    });

    it('replays to the named destinations only, one whose route is disabled included', async () => {
      const event = await deliveredEvent();
      const response = await h.api('POST', `/api/events/${event.eventId}/replay`, { body: { destinationIds: [d3.id] } });
      expect(response.status).to.equal(202);
      expect(response.body.deliveriesCreated).to.equal(1);
      const [created] = await newDeliveries(event);
      expect(created).to.deep.include({ destinationId: d3.id, status: 'pending' });
      expect((await watchers[d3.id]!.jobFor(created!.id)).body.toString()).to.equal(body);
    });

    it('answers 404 RESOURCE_NOT_FOUND for a destination of another organization, and creates nothing', async () => {
      const event = await deliveredEvent();
      const response = await h.api('POST', `/api/events/${event.eventId}/replay`, { body: { destinationIds: [d1.id, foreignDestination] } });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect(await newDeliveries(event)).to.deep.equal([]);
      expect((await h.api('GET', `/api/events/${event.eventId}`)).body.status).to.equal('delivered');
    });

    it('answers 400 for empty or malformed destinationIds and for unknown fields', async () => {
      const event = await deliveredEvent();
      for (const bad of [{ destinationIds: [] }, { destinationIds: 'dst_x' }, { destinationIds: [42] }, { destinations: [d1.id] }]) {
        const response = await h.api('POST', `/api/events/${event.eventId}/replay`, { body: bad });
        expect(response.status, JSON.stringify(bad)).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      }
    });

    it("answers 404 for an unknown event and for another organization's event", async () => {
      const event = await deliveredEvent();
      expect((await h.api('POST', '/api/events/evt_unknown/replay')).status).to.equal(404);
      const foreign = await h.apiB('POST', `/api/events/${event.eventId}/replay`);
      expect(foreign.status).to.equal(404);
      expect(await newDeliveries(event)).to.deep.equal([]);
    });

    it('answers 410 PAYLOAD_EXPIRED once retention removed the payload, and creates nothing', async () => {
      const now = Date.now();
      const old = await deliveredEvent({ receivedAt: now - 40 * DAY_MS });
      await expirePayloads(h.relay.store.sql, now - 30 * DAY_MS, now, 100);
      const response = await h.api('POST', `/api/events/${old.eventId}/replay`);
      expect(response.status).to.equal(410);
      expect(response.body).to.deep.include({ error: 'Gone', code: 'PAYLOAD_EXPIRED' });
      expect(await newDeliveries(old)).to.deep.equal([]);
    });

    it('creates nothing for an event whose source has no enabled route', async () => {
      const event = await deliveredEvent({ sourceId: unroutedSourceId, targets: [] });
      const response = await h.api('POST', `/api/events/${event.eventId}/replay`);
      expect(response.status).to.equal(202);
      expect(response.body.deliveriesCreated).to.equal(0);
      expect((await h.api('GET', `/api/events/${event.eventId}`)).body.status).to.equal('delivered');
    });

    it(`answers 400 naming destinationIds for more than ${MAX_ROUTES} destinations (RELAY_MAX_ROUTES_PER_SOURCE), and creates nothing`, async () => {
      const event = await deliveredEvent();
      const tooMany = await manyDestinations(MAX_ROUTES + 1);
      expectTooManyDestinations(await h.api('POST', `/api/events/${event.eventId}/replay`, { body: { destinationIds: tooMany } }));
      expect(await newDeliveries(event)).to.deep.equal([]);
      // A repeated id counts once: the bound is on destinations.
      const within = await h.api('POST', `/api/events/${event.eventId}/replay`, { body: { destinationIds: [...tooMany.slice(0, MAX_ROUTES), tooMany[0]] } });
      expect(within.status, within.text).to.equal(202);
      expect(within.body.deliveriesCreated).to.equal(MAX_ROUTES);
    });
  });

  describe('when the broker does not take the jobs', () => {
    it("removes the deliveries whose jobs were not queued, recomputes the event, and answers 503", async () => {
      const event = await deliveredEvent();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-closed-broker-'));
      const closed = openEmbeddedBroker({ dataDir });
      await closed.close();
      const live = h.relay.broker.producer();
      // d1's topic takes its job on the relay's broker; d2's goes to a broker that is closed.
      const publish = (topic: string, messages: Parameters<typeof live.send>[1]) =>
        topic === destinationTopic(d2.id) ? closed.producer().send(topic, messages) : live.send(topic, messages);
      try {
        const deps = { store: h.relay.store, secrets: h.secrets, now: Date.now, publish, routesFor: createRouteTargets(h.relay.store.sql).forSource, lanes: false, maxRoutesPerSource: 100 };
        const failure = await replayEvent(deps, { org: h.relay.bootstrap.org }, event.eventId).then(() => null, (error: unknown) => error);
        expect(failure).to.be.instanceOf(UnavailableError);
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
      const created = await newDeliveries(event);
      expect(created.map((d) => [d.destinationId, d.status])).to.deep.equal([[d1.id, 'pending']]);
      await watchers[d1.id]!.jobFor(created[0]!.id);
      expect((await h.api('GET', `/api/events/${event.eventId}`)).body).to.deep.include({ status: 'pending', deliveriesCount: 2 });
    });
  });

  describe('POST /api/events/bulk/replay', () => {
    it('queues every known event and reports unknown, foreign and expired ids as skipped', async () => {
      const now = Date.now();
      const [first, second] = [await deliveredEvent(), await deliveredEvent()];
      const expired = await deliveredEvent({ receivedAt: now - 45 * DAY_MS });
      await expirePayloads(h.relay.store.sql, now - 30 * DAY_MS, now, 100);
      const unrouted = await deliveredEvent({ sourceId: unroutedSourceId, targets: [] });
      const theirs = await seedEvent(h, { orgId: org.b, sourceId: (await createSource(h, { name: 'B', slug: 'b-src' }, h.apiB)).id });
      const eventIds = [first.eventId, 'evt_unknown', second.eventId, first.eventId, expired.eventId, theirs.eventId, unrouted.eventId];
      const response = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds } });
      expect(response.status, response.text).to.equal(202);
      expect(response.body).to.deep.include({ eventsQueued: 2, deliveriesCreated: 4 });
      expect(response.body.message).to.be.a('string');
      expect(response.body.skipped).to.deep.equal([
        { eventId: 'evt_unknown', reason: 'not_found' },
        { eventId: expired.eventId, reason: 'payload_expired' },
        { eventId: theirs.eventId, reason: 'not_found' },
        { eventId: unrouted.eventId, reason: 'no_destinations' },
      ]);
      for (const event of [first, second]) {
        expect((await newDeliveries(event)).map((d) => d.destinationId)).to.have.members([d1.id, d2.id]);
        expect((await h.api('GET', `/api/events/${event.eventId}`)).body.status).to.equal('pending');
      }
      expect((await h.apiB('GET', `/api/events/${theirs.eventId}/deliveries`)).body.data).to.deep.equal([]);
    });

    it('replays every event to the named destinations', async () => {
      const events = [await deliveredEvent(), await deliveredEvent(), await deliveredEvent()];
      const response = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds: events.map((e) => e.eventId), destinationIds: [d3.id] } });
      expect(response.body).to.deep.include({ eventsQueued: 3, deliveriesCreated: 3, skipped: [] });
      for (const event of events) {
        const [created] = await newDeliveries(event);
        expect(created!.destinationId).to.equal(d3.id);
        await watchers[d3.id]!.jobFor(created!.id);
      }
    });

    it('answers 400 for more than 1000 ids, and for a missing, empty or malformed eventIds', async () => {
      const tooMany = Array.from({ length: 1001 }, (_, i) => `evt_${i}`);
      for (const bad of [{ eventIds: tooMany }, {}, { eventIds: [] }, { eventIds: 'evt_1' }, { eventIds: ['evt_1'], extra: true }]) {
        const response = await h.api('POST', '/api/events/bulk/replay', { body: bad });
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      }
      const exactly = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds: tooMany.slice(0, 1000) } });
      expect(exactly.status).to.equal(202);
      expect(exactly.body).to.deep.include({ eventsQueued: 0, deliveriesCreated: 0 });
      expect(exactly.body.skipped).to.have.length(1000);
    });

    it(`answers 400 naming the bound when events × destinations exceed ${MAX_BULK_REPLAY_DELIVERIES}, and creates nothing`, async () => {
      const events: SeededEvent[] = [];
      for (let n = 0; n < 101; n += 1) events.push(await deliveredEvent());
      const many = await manyDestinations(100);
      const response = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds: events.map((e) => e.eventId), destinationIds: many } });
      expect(response.status, response.text).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
      expect(response.body.message).to.include(String(MAX_BULK_REPLAY_DELIVERIES)).and.include('10100').and.include('POST /api/replays');
      expect(response.body.details.map((d: { field: string }) => d.field)).to.deep.equal(['eventIds']);
      for (const event of events.slice(0, 3)) expect(await newDeliveries(event)).to.deep.equal([]);
      // Fewer events are within the bound.
      const within = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds: events.slice(0, 2).map((e) => e.eventId), destinationIds: many.slice(0, 2) } });
      expect(within.status, within.text).to.equal(202);
    });

    it('answers 400 naming destinationIds when it names more destinations than a source may have routes, and creates nothing', async () => {
      const events = [await deliveredEvent(), await deliveredEvent()];
      const tooMany = await manyDestinations(101);
      const response = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds: events.map((e) => e.eventId), destinationIds: tooMany } });
      expectTooManyDestinations(response);
      for (const event of events) expect(await newDeliveries(event)).to.deep.equal([]);
    });

    it("answers 404 when a named destination is another organization's, and creates nothing", async () => {
      const event = await deliveredEvent();
      const response = await h.api('POST', '/api/events/bulk/replay', { body: { eventIds: [event.eventId], destinationIds: [foreignDestination] } });
      expect(response.status).to.equal(404);
      expect(await newDeliveries(event)).to.deep.equal([]);
    });
  });
});
