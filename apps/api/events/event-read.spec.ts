import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination, createSource, orgIds, recordTries, seedEvent, type SeededEvent } from '../../../testing/event-fixtures.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EVENT_KEYS = [
  'id', 'sourceId', 'source', 'status', 'headers', 'contentType', 'payloadSize', 'payloadHash', 'signatureValid',
  'deliveriesCount', 'deliveriesSucceeded', 'deliveriesFailed', 'failureReason', 'filteredRouteIds', 'traceId', 'receivedAt', 'createdAt',
];

describeEachStore('Event resources', (target) => {
  let h: ApiHarness;
  let org: { a: string; b: string };
  let sourceId: string;
  let one: { id: string; name: string };
  let two: { id: string; name: string };
  const body = '{ "order": {"id": "ord_9", "total": 12.50} }';

  before(async function () {
    h = await startApiHarness(this, target);
    org = await orgIds(h);
    sourceId = (await createSource(h, { name: 'Shop', slug: 'shop' })).id;
    one = await createDestination(h, { name: 'Orders', url: 'https://orders.example.com/hook' });
    two = await createDestination(h, { name: 'Audit', url: 'https://audit.example.com/hook' });
  });

  after(async () => {
    await h?.stop();
  });

  const targets = () => [
    { destinationId: one.id, destinationName: one.name },
    { destinationId: two.id, destinationName: two.name },
  ];
  const seed = (extra: Partial<Parameters<typeof seedEvent>[1]> = {}) => seedEvent(h, { orgId: org.a, sourceId, body, targets: targets(), ...extra });

  /** Orders delivered on the second try; Audit failed for good. */
  async function deliveredAndFailed(): Promise<SeededEvent> {
    const event = await seed();
    const [orders, audit] = event.deliveries;
    const start = event.receivedAt + 10;
    await recordTries(h, event, orders!, [{ statusCode: 503, latencyMs: 30, startedAt: start }, { statusCode: 200, latencyMs: 40, startedAt: start + 1000 }]);
    await recordTries(h, event, audit!, [{ statusCode: 410, latencyMs: 25, startedAt: start }], { gaveUp: true });
    return event;
  }

  describe('GET /api/events/:id', () => {
    it('answers the event without payload and deliveries by default', async () => {
      const event = await deliveredAndFailed();
      const response = await h.api('GET', `/api/events/${event.eventId}`);
      expect(response.status).to.equal(200);
      expect(Object.keys(response.body)).to.have.members(EVENT_KEYS);
      // Its record carried no traceparent, so the router's span began the event's trace.
      expect(response.body.traceId).to.match(/^[0-9a-f]{32}$/).and.not.match(/^0+$/);
      expect(response.body).to.deep.include({
        id: event.eventId,
        sourceId,
        source: { id: sourceId, name: 'Shop' },
        status: 'partial',
        headers: { 'content-type': 'application/json' },
        contentType: 'application/json',
        payloadSize: Buffer.byteLength(body),
        signatureValid: true,
        deliveriesCount: 2,
        deliveriesSucceeded: 1,
        deliveriesFailed: 1,
        filteredRouteIds: [],
        receivedAt: new Date(event.receivedAt).toISOString(),
        createdAt: new Date(event.receivedAt + 5).toISOString(),
      });
      expect(response.body.payloadHash).to.match(/^sha256:[0-9a-f]{64}$/);
    });

    it('includes the payload with includePayload=true', async () => {
      const event = await seed();
      const response = await h.api('GET', `/api/events/${event.eventId}?includePayload=true`);
      expect(response.body.payload).to.deep.equal({ order: { id: 'ord_9', total: 12.5 } });
      expect(response.body.payloadExpired).to.equal(false);
      expect(response.body).not.to.have.property('deliveries');
    });

    it('shows a text payload as a string, and a binary one as base64', async () => {
      const text = await seed({ body: 'hello there', contentType: 'text/plain' });
      expect((await h.api('GET', `/api/events/${text.eventId}?includePayload=true`)).body.payload).to.equal('hello there');
      const bytes = Buffer.from([0, 159, 146, 150, 255]);
      const binary = await seed({ body: bytes, contentType: 'application/octet-stream' });
      const response = await h.api('GET', `/api/events/${binary.eventId}?includePayload=true`);
      expect(response.body).to.deep.include({ payload: bytes.toString('base64'), payloadEncoding: 'base64' });
    });

    it('shows a form payload as its fields', async () => {
      const form = await seed({ body: 'From=%2B15551234&Body=hi+there&Tag=a&Tag=b', contentType: 'application/x-www-form-urlencoded' });
      const response = await h.api('GET', `/api/events/${form.eventId}?includePayload=true`);
      expect(response.body.payload).to.deep.equal({ From: '+15551234', Body: 'hi there', Tag: ['a', 'b'] });
    });

    it('includes the deliveries with includeDeliveries=true, newest first', async () => {
      const event = await deliveredAndFailed();
      const response = await h.api('GET', `/api/events/${event.eventId}?includeDeliveries=true&includePayload=false`);
      expect(response.body).not.to.have.property('payload');
      // Created together for Orders then Audit: the later id comes first.
      const [audit, orders] = response.body.deliveries;
      expect(response.body.deliveries.map((d: { destinationName: string }) => d.destinationName)).to.deep.equal(['Audit', 'Orders']);
      expect(orders).to.deep.include({ destinationId: one.id, status: 'delivered', attemptCount: 2, latency: 40, statusCode: 200 });
      expect(orders.deliveredAt).to.match(ISO_MS);
      expect(orders).not.to.have.property('error');
      expect(audit).to.deep.include({ destinationId: two.id, status: 'failed', attemptCount: 1, latency: null, statusCode: 410, error: 'HTTP 410', deliveredAt: null });
    });

    it('answers 400 for a flag that is not true or false', async () => {
      const event = await seed();
      for (const query of ['includePayload=1', 'includeDeliveries=yes']) {
        const response = await h.api('GET', `/api/events/${event.eventId}?${query}`);
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      }
    });

    it('answers 404 RESOURCE_NOT_FOUND for an unknown id and for another organization', async () => {
      const event = await seed();
      for (const [call, id] of [[h.api, 'evt_unknown'], [h.apiB, event.eventId]] as const) {
        const response = await call('GET', `/api/events/${id}?includePayload=true`);
        expect(response.status).to.equal(404);
        expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      }
    });
  });

  describe('GET /api/events/:id/payload', () => {
    it('answers the bytes as received, with their content type', async () => {
      const event = await seed({ contentType: 'application/json;charset=UTF-8' });
      const response = await h.api('GET', `/api/events/${event.eventId}/payload`);
      expect(response.status).to.equal(200);
      expect(response.headers['content-type']).to.equal('application/json;charset=UTF-8');
      expect(response.headers['x-content-type-options']).to.equal('nosniff');
      expect(response.headers).not.to.have.property('content-disposition');
      expect(response.text).to.equal(body);
    });

    for (const contentType of ['text/html', 'image/svg+xml', 'application/xhtml+xml; charset=utf-8', 'text/xml']) {
      it(`answers a ${contentType} body as an attachment with nosniff, so a browser never renders it`, async () => {
        const event = await seed({ body: '<script>alert(1)</script>', contentType });
        const response = await h.api('GET', `/api/events/${event.eventId}/payload`);
        expect(response.status).to.equal(200);
        expect(response.headers['content-type']).to.equal(contentType);
        expect(response.headers['x-content-type-options']).to.equal('nosniff');
        expect(response.headers['content-disposition']).to.equal(`attachment; filename="${event.eventId}"`);
      });
    }

    it('answers binary bodies byte for byte', async () => {
      const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
      const event = await seed({ body: bytes, contentType: 'application/octet-stream' });
      const response = await fetch(`${h.url}/api/events/${event.eventId}/payload`, { headers: { authorization: `Bearer ${h.keyA}` } });
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).to.equal(true);
      expect(response.headers.get('content-type')).to.equal('application/octet-stream');
    });

    it('answers 404 for an unknown id and for another organization', async () => {
      const event = await seed();
      expect((await h.api('GET', '/api/events/evt_unknown/payload')).status).to.equal(404);
      expect((await h.apiB('GET', `/api/events/${event.eventId}/payload`)).status).to.equal(404);
    });
  });

  describe('GET /api/events/:id/deliveries', () => {
    it('answers {data} with every delivery, and only those of a status when asked', async () => {
      const event = await deliveredAndFailed();
      const all = await h.api('GET', `/api/events/${event.eventId}/deliveries`);
      expect(all.status).to.equal(200);
      expect(Object.keys(all.body)).to.deep.equal(['data']);
      expect(all.body.data.map((d: { destinationName: string }) => d.destinationName)).to.have.members(['Orders', 'Audit']);
      const failed = await h.api('GET', `/api/events/${event.eventId}/deliveries?status=failed`);
      expect(failed.body.data).to.have.length(1);
      expect(failed.body.data[0]).to.deep.include({ destinationName: 'Audit', status: 'failed', error: 'HTTP 410' });
      expect((await h.api('GET', `/api/events/${event.eventId}/deliveries?status=pending`)).body.data).to.deep.equal([]);
    });

    it('answers 400 for an unknown status, 404 for an unknown or foreign event', async () => {
      const event = await seed();
      expect((await h.api('GET', `/api/events/${event.eventId}/deliveries?status=done`)).status).to.equal(400);
      expect((await h.api('GET', '/api/events/evt_unknown/deliveries')).status).to.equal(404);
      expect((await h.apiB('GET', `/api/events/${event.eventId}/deliveries`)).status).to.equal(404);
    });
  });

  describe('GET /api/events/:id/timeline', () => {
    it('shows an event retried twice then delivered: its stages in order and three attempts', async () => {
      const event = await seed({ targets: [{ destinationId: one.id, destinationName: one.name }] });
      const start = event.receivedAt + 20;
      const tries = await recordTries(h, event, event.deliveries[0]!, [
        { statusCode: 503, latencyMs: 120, startedAt: start },
        { statusCode: 500, latencyMs: 80, startedAt: start + 1_000 },
        { statusCode: 200, latencyMs: 45, startedAt: start + 3_000 },
      ]);
      const response = await h.api('GET', `/api/events/${event.eventId}/timeline`);
      expect(response.status).to.equal(200);
      const timeline = response.body;
      for (const stage of ['received', 'validated', 'queued']) expect(timeline[stage]).to.match(ISO_MS);
      expect(Date.parse(timeline.received)).to.be.at.most(Date.parse(timeline.validated));
      expect(Date.parse(timeline.validated)).to.be.at.most(Date.parse(timeline.queued));
      expect(timeline.deliveries).to.have.length(1);
      expect(timeline.deliveries[0]).to.deep.include({ destinationId: one.id, destinationName: 'Orders', status: 'delivered' });
      expect(timeline.deliveries[0].attempts).to.deep.equal(
        tries.map((t, i) => ({
          attemptNumber: i + 1,
          startedAt: new Date(t.startedAt).toISOString(),
          completedAt: new Date(t.completedAt).toISOString(),
          status: t.ok ? 'success' : 'failed',
          statusCode: t.statusCode,
          latency: t.latencyMs,
          ...(t.ok ? {} : { error: t.error }),
        })),
      );
      expect(timeline.deliveries[0].attempts.map((a: { statusCode: number }) => a.statusCode)).to.deep.equal([503, 500, 200]);
      expect(timeline.totalDuration).to.equal(tries[2]!.completedAt - event.receivedAt);
    });

    it('lasts until queuing for an event with no attempt yet', async () => {
      const event = await seed();
      const timeline = (await h.api('GET', `/api/events/${event.eventId}/timeline`)).body;
      expect(timeline.deliveries.map((d: { attempts: unknown[] }) => d.attempts)).to.deep.equal([[], []]);
      expect(timeline.totalDuration).to.equal(3);
    });

    it('answers 404 for an unknown id and for another organization', async () => {
      const event = await seed();
      expect((await h.api('GET', '/api/events/evt_unknown/timeline')).status).to.equal(404);
      expect((await h.apiB('GET', `/api/events/${event.eventId}/timeline`)).status).to.equal(404);
    });
  });

  describe('statusCode when no HTTP answer came', () => {
    it('is null in the deliveries, the event detail and the timeline alike (as in the destination test)', async () => {
      const event = await seed();
      const [orders] = event.deliveries;
      await recordTries(h, event, orders!, [{ statusCode: null, latencyMs: 30_000, startedAt: event.receivedAt + 10 }]);
      const deliveries = await h.api('GET', `/api/events/${event.eventId}/deliveries`);
      const detail = await h.api('GET', `/api/events/${event.eventId}?includeDeliveries=true`);
      const timeline = await h.api('GET', `/api/events/${event.eventId}/timeline`);
      const byId = (list: { id: string }[]) => list.find((d) => d.id === orders!.id) as Record<string, unknown>;
      expect(byId(deliveries.body.data)).to.include({ status: 'retrying', statusCode: null });
      expect(byId(detail.body.deliveries)).to.include({ status: 'retrying', statusCode: null });
      const attempts = timeline.body.deliveries.find((d: { deliveryId: string }) => d.deliveryId === orders!.id).attempts;
      expect(attempts).to.have.length(1);
      expect(attempts[0]).to.include({ status: 'failed', statusCode: null });
      // Not attempted yet: no answer either.
      const audit = deliveries.body.data.find((d: { id: string }) => d.id === event.deliveries[1]!.id);
      expect(audit).to.include({ status: 'pending', statusCode: null });
    });
  });

  describe('DELETE /api/events/:id', () => {
    const count = async (table: string, eventId: string) => {
      const column = table === 'events' ? 'id' : 'event_id';
      const [row] = await h.relay.store.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?`, [eventId]);
      return Number(row!.n);
    };

    it('answers 204 and removes the event with its deliveries, attempts and payload', async () => {
      const event = await deliveredAndFailed();
      expect(await count('attempts', event.eventId)).to.equal(3);
      const response = await h.api('DELETE', `/api/events/${event.eventId}`);
      expect(response.status).to.equal(204);
      expect(response.text).to.equal('');
      for (const table of ['events', 'deliveries', 'attempts']) expect(await count(table, event.eventId), table).to.equal(0);
      expect((await h.api('GET', `/api/events/${event.eventId}`)).status).to.equal(404);
      expect((await h.api('GET', '/api/events?search=ord_9')).body.data.map((x: { id: string }) => x.id)).not.to.include(event.eventId);
    });

    it('answers 404 for an unknown id, and for another organization, whose attempt deletes nothing', async () => {
      const event = await seed();
      expect((await h.api('DELETE', '/api/events/evt_unknown')).status).to.equal(404);
      const foreign = await h.apiB('DELETE', `/api/events/${event.eventId}`);
      expect(foreign.status).to.equal(404);
      expect(foreign.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect(await count('events', event.eventId)).to.equal(1);
    });
  });
});
