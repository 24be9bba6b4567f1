import { expect } from 'chai';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../testing/api-harness.js';
import { createDestination, createSource, orgIds, recordTries, seedEvent, type SeededEvent } from '../../testing/event-fixtures.js';

/** SPEC: what deleting a source or a destination does to the events and deliveries it had. */
describeEachStore('Deleting sources and destinations', (target) => {
  let h: ApiHarness;
  let orgA: string;

  before(async function () {
    h = await startApiHarness(this, target);
    orgA = (await orgIds(h)).a;
  });

  after(async () => {
    await h?.stop();
  });

  let names = 0;
  /** A source whose event was delivered once (so it has a delivery and an attempt) to a new destination. */
  async function deliveredEvent(): Promise<{ sourceId: string; destinationId: string; event: SeededEvent }> {
    const n = ++names;
    const source = await createSource(h, { name: `Source ${n}`, slug: `source-${n}` });
    const destination = await createDestination(h, { name: `Destination ${n}`, url: `https://d${n}.example.com/hook` });
    const event = await seedEvent(h, { orgId: orgA, sourceId: source.id, targets: [{ destinationId: destination.id, destinationName: destination.name }] });
    await recordTries(h, event, event.deliveries[0]!, [{ statusCode: 200, latencyMs: 20, startedAt: event.receivedAt + 10 }]);
    return { sourceId: source.id, destinationId: destination.id, event };
  }

  const rowsOf = async (eventId: string) => {
    const count = async (table: string) =>
      Number((await h.relay.store.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE event_id = ?`, [eventId]))[0]!.n);
    return { deliveries: await count('deliveries'), attempts: await count('attempts') };
  };

  it('DELETE /api/sources/:id removes its events, their deliveries and attempts', async () => {
    const { sourceId, event } = await deliveredEvent();
    expect(await rowsOf(event.eventId)).to.deep.equal({ deliveries: 1, attempts: 1 });
    expect((await h.api('DELETE', `/api/sources/${sourceId}`)).status).to.equal(204);
    expect((await h.api('GET', `/api/events/${event.eventId}`)).status).to.equal(404);
    expect((await h.api('GET', `/api/events?sourceId=${sourceId}`)).body.data).to.deep.equal([]);
    expect(await rowsOf(event.eventId)).to.deep.equal({ deliveries: 0, attempts: 0 });
  });

  it('DELETE /api/sources/bulk removes the events of every listed source, and only theirs', async () => {
    const [one, two, kept] = [await deliveredEvent(), await deliveredEvent(), await deliveredEvent()];
    const response = await h.api('DELETE', '/api/sources/bulk', { body: { ids: [one.sourceId, two.sourceId] } });
    expect(response.status, response.text).to.equal(200);
    for (const gone of [one, two]) {
      expect((await h.api('GET', `/api/events/${gone.event.eventId}`)).status).to.equal(404);
      expect(await rowsOf(gone.event.eventId)).to.deep.equal({ deliveries: 0, attempts: 0 });
    }
    expect((await h.api('GET', `/api/events/${kept.event.eventId}`)).status).to.equal(200);
    expect(await rowsOf(kept.event.eventId)).to.deep.equal({ deliveries: 1, attempts: 1 });
  });

  for (const [how, remove] of [
    ['DELETE /api/destinations/:id', (id: string) => h.api('DELETE', `/api/destinations/${id}`)],
    ['DELETE /api/destinations/bulk', (id: string) => h.api('DELETE', '/api/destinations/bulk', { body: { ids: [id] } })],
  ] as const) {
    it(`${how} keeps the delivery history readable: the event, its deliveries and timeline, under the destination's name`, async () => {
      const { destinationId, event } = await deliveredEvent();
      const name = `Destination ${names}`;
      const before = await h.api('GET', `/api/events/${event.eventId}?includeDeliveries=true`);
      expect((await remove(destinationId)).status).to.be.oneOf([200, 204]);
      expect((await h.api('GET', `/api/destinations/${destinationId}`)).status).to.equal(404);
      const after = await h.api('GET', `/api/events/${event.eventId}?includeDeliveries=true`);
      expect(after.body).to.deep.equal(before.body);
      const deliveries = await h.api('GET', `/api/events/${event.eventId}/deliveries`);
      expect(deliveries.body.data).to.have.length(1);
      expect(deliveries.body.data[0]).to.include({ destinationId, destinationName: name, status: 'delivered', statusCode: 200 });
      const timeline = await h.api('GET', `/api/events/${event.eventId}/timeline`);
      expect(timeline.body.deliveries[0]).to.include({ destinationId, destinationName: name, status: 'delivered' });
      expect(timeline.body.deliveries[0].attempts).to.have.length(1);
    });
  }
});
