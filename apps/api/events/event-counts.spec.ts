import { expect } from 'chai';
import { foldEventCounts } from '../../../libs/store/event-counts.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { deleteEvents } from '../../../libs/ledger/retention.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { EVENT_STATUSES } from './event-schema.js';
import { createDestination, createSource, orgIds, recordTries, seedEvent, type SeededEvent } from '../../../testing/event-fixtures.js';

const MINUTE = 60_000;

describeEachStore('Event counts: list totals and eventsCount follow the stored events', (target) => {
  let h: ApiHarness;
  let org: { a: string; b: string };
  let shop: string;
  let billing: string;
  let theirs: string;
  let destination: { destinationId: string; destinationName: string }[];
  let base: number;

  const total = async (query = '', api = h.api) => {
    const response = await api('GET', `/api/events${query}`);
    expect(response.status, response.text).to.equal(200);
    expect(response.body.pagination.totalExact).to.equal(true);
    return response.body.pagination.total as number;
  };
  const eventsCount = async (sourceId: string) => {
    const one = await h.api('GET', `/api/sources/${sourceId}`);
    const listed = await h.api('GET', '/api/sources?pageSize=100');
    const summary = listed.body.data.find((s: { id: string }) => s.id === sourceId);
    expect(summary.eventsCount, 'list and detail agree').to.equal(one.body.eventsCount);
    return one.body.eventsCount as number;
  };
  const stored = async (orgId: string, where = '', params: unknown[] = []) => {
    const [row] = await h.relay.store.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM events WHERE org_id = ?${where}`, [orgId, ...params]);
    return Number(row!.n);
  };

  /** Every total the counts answer, for organization A and its sources, against a COUNT(*) of the rows themselves. */
  async function expectCountsMatchStore(sources = [shop, billing]): Promise<void> {
    expect(await total(), 'organization').to.equal(await stored(org.a));
    for (const status of EVENT_STATUSES) expect(await total(`?status=${status}`), status).to.equal(await stored(org.a, ' AND status = ?', [status]));
    for (const sourceId of sources) {
      const count = await stored(org.a, ' AND source_id = ?', [sourceId]);
      expect(await total(`?sourceId=${sourceId}`), sourceId).to.equal(count);
      expect(await eventsCount(sourceId), `${sourceId} eventsCount`).to.equal(count);
      for (const status of EVENT_STATUSES) {
        expect(await total(`?sourceId=${sourceId}&status=${status}`)).to.equal(await stored(org.a, ' AND source_id = ? AND status = ?', [sourceId, status]));
      }
    }
    expect(await total('', h.apiB), 'organization B').to.equal(await stored(org.b));
  }

  const seed = (sourceId: string, minutes: number, targets = destination) =>
    seedEvent(h, { orgId: sourceId === theirs ? org.b : org.a, sourceId, receivedAt: base + minutes * MINUTE, targets });
  const deliver = (event: SeededEvent, statusCode = 200) =>
    recordTries(h, event, event.deliveries[0]!, [{ statusCode, latencyMs: 5, startedAt: event.receivedAt + 10 }], { gaveUp: true });

  beforeEach(async function () {
    h = await startApiHarness(this, target);
    org = await orgIds(h);
    shop = (await createSource(h, { name: 'Shop', slug: 'shop' })).id;
    billing = (await createSource(h, { name: 'Billing', slug: 'billing' })).id;
    theirs = (await createSource(h, { name: 'Theirs', slug: 'theirs' }, h.apiB)).id;
    const d = await createDestination(h, { name: 'One', url: 'https://one.example.com/hook' });
    destination = [{ destinationId: d.id, destinationName: d.name }];
    base = Date.now() - 60 * MINUTE;
  });

  afterEach(async () => {
    await h?.stop();
  });

  it('counts events as they are stored and as their status moves', async () => {
    const shopEvents = [await seed(shop, 0), await seed(shop, 1), await seed(shop, 2, [])];
    const billingEvents = [await seed(billing, 3), await seed(billing, 4)];
    await seed(theirs, 5);
    await deliver(shopEvents[0]!);
    await deliver(billingEvents[0]!, 500);
    expect(await total()).to.equal(5);
    expect(await total(`?sourceId=${shop}&status=delivered`)).to.equal(2);
    expect(await total('?status=failed')).to.equal(1);
    expect(await total('?status=pending')).to.equal(2);
    expect(await eventsCount(shop)).to.equal(3);
    await expectCountsMatchStore();
  });

  it('lowers eventsCount and the totals when an event is deleted', async () => {
    const event = await seed(shop, 0);
    await seed(shop, 1);
    expect(await eventsCount(shop)).to.equal(2);
    expect((await h.api('DELETE', `/api/events/${event.eventId}`)).status).to.equal(204);
    expect(await eventsCount(shop)).to.equal(1);
    expect(await total('?status=pending')).to.equal(1);
    await expectCountsMatchStore();
  });

  it('lowers them when retention deletes events', async () => {
    for (const minutes of [0, 1, 2, 30]) await deliver(await seed(minutes < 2 ? shop : billing, minutes));
    // Everything stored before minute 10 is past retention; a batch of 2 leaves work for a second batch.
    const cutoff = base + 10 * MINUTE;
    expect(await deleteEvents(h.relay.store.sql, cutoff, 2)).to.equal(2);
    expect(await deleteEvents(h.relay.store.sql, cutoff, 2)).to.equal(1);
    expect(await eventsCount(shop)).to.equal(0);
    expect(await eventsCount(billing)).to.equal(1);
    expect(await total('?status=delivered')).to.equal(1);
    await expectCountsMatchStore();
  });

  it('drops a deleted source’s events from the totals, one source or in bulk', async () => {
    const extra = (await createSource(h, { name: 'Extra', slug: 'extra' })).id;
    for (const sourceId of [shop, shop, billing, extra, extra, extra]) await seed(sourceId, 0);
    await seed(theirs, 0);
    expect(await total()).to.equal(6);
    expect((await h.api('DELETE', `/api/sources/${extra}`)).status).to.equal(204);
    expect(await total()).to.equal(3);
    expect((await h.api('DELETE', '/api/sources/bulk', { body: { ids: [shop] } })).body).to.deep.equal({ success: true, deleted: 1 });
    expect(await total()).to.equal(1);
    expect(await total('?status=pending')).to.equal(1);
    expect(await total('', h.apiB)).to.equal(1);
    await expectCountsMatchStore([billing]);
  });

  it('folds the counts into one row per key, dropping the keys of deleted sources, and reads the same after', async () => {
    const extra = (await createSource(h, { name: 'Extra', slug: 'extra' })).id;
    for (const sourceId of [shop, shop, billing, extra]) await deliver(await seed(sourceId, 0));
    await seed(shop, 1);
    expect((await h.api('DELETE', `/api/sources/${extra}`)).status).to.equal(204);
    await foldEventCounts(h.relay.store.sql);
    const rows = await h.relay.store.sql.all<{ sourceId: string; status: string; n: number | string }>(
      'SELECT source_id AS "sourceId", status, n FROM event_counts WHERE org_id = ?',
      [org.a],
    );
    const expected = [
      { sourceId: shop, status: 'delivered', n: 2 },
      { sourceId: shop, status: 'pending', n: 1 },
      { sourceId: billing, status: 'delivered', n: 1 },
    ];
    expect(rows.map((row) => ({ ...row, n: Number(row.n) }))).to.have.deep.members(expected).and.have.length(3);
    await expectCountsMatchStore();
  });
});
