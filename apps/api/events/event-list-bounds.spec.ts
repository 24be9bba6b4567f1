import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createSource, orgIds, seedEvent, type SeededEvent } from '../../../testing/event-fixtures.js';
import { selectEventPage, type EventFilter, type EventListLimits } from '../../../libs/ledger/event-queries.js';

const MINUTE = 60_000;
/** Small bounds, so a dozen events show what a million would. */
const LIMITS: EventListLimits = { count: 5, searchScan: 4, searchIndex: 3 };

describeEachStore('Event lists: bounded totals and searches', (target) => {
  let h: ApiHarness;
  let orgId: string;
  let sourceId: string;
  // Oldest first. Every payload has "order.created"; e[1] alone has "needle"; e[0..3] have "middling".
  let e: SeededEvent[];

  const createdAt = (event: SeededEvent) => event.receivedAt + 5;
  const list = (filter: EventFilter, page = 1, pageSize = 20) => selectEventPage(h.relay.store.sql, orgId, filter, { page, pageSize }, LIMITS);
  const ids = (events: SeededEvent[]) => events.map((event) => event.eventId);
  const newestFirst = (...indexes: number[]) => indexes.map((i) => e[i]!.eventId);

  before(async function () {
    h = await startApiHarness(this, target);
    orgId = (await orgIds(h)).a;
    sourceId = (await createSource(h, { name: 'Shop', slug: 'shop' })).id;
    const base = Date.now() - 60 * MINUTE;
    e = [];
    for (let i = 0; i < 12; i += 1) {
      const words = [i === 1 ? 'needle' : '', i < 4 ? 'middling' : ''].join(' ');
      e.push(await seedEvent(h, { orgId, sourceId, receivedAt: base + i * MINUTE, body: JSON.stringify({ type: 'order.created', n: i, words }) }));
    }
  });

  after(async () => {
    await h?.stop();
  });

  it('answers organization, source and status totals exactly, past the count bound', async () => {
    const page = await list({ sourceId, status: 'delivered' }, 2, 2);
    expect(page.rows.map((row) => row.id)).to.deep.equal(newestFirst(9, 8));
    expect(page).to.include({ total: 12, totalExact: true });
  });

  it('counts a time window up to the bound, then gives a lower bound that covers the page shown', async () => {
    expect(await list({ from: createdAt(e[8]!) })).to.include({ total: 4, totalExact: true });
    expect(await list({ from: createdAt(e[0]!) }, 1, 2)).to.include({ total: 5, totalExact: false });
    const deep = await list({ from: createdAt(e[0]!) }, 4, 2);
    expect(deep.rows.map((row) => row.id)).to.deep.equal(newestFirst(5, 4));
    expect(deep).to.include({ total: 8, totalExact: false });
  });

  it('finds a common term among the newest candidates, newest first, without gathering every match', async () => {
    const page = await list({ search: 'ORDER.created' }, 1, 2);
    expect(page.rows.map((row) => row.id)).to.deep.equal(newestFirst(11, 10));
    // It stopped at the page and one more: at least 3 match.
    expect(page).to.include({ total: 3, totalExact: false });
    expect(page.searchedBackTo).to.equal(undefined);
  });

  it('counts exactly when the other filters leave fewer candidates than the bound', async () => {
    const page = await list({ search: 'order.created', from: createdAt(e[9]!) });
    expect(page.rows.map((row) => row.id)).to.deep.equal(newestFirst(11, 10, 9));
    expect(page).to.include({ total: 3, totalExact: true });
    const paged = await list({ search: 'order.created', from: createdAt(e[9]!) }, 1, 2);
    expect(paged.rows.map((row) => row.id)).to.deep.equal(newestFirst(11, 10));
    expect(paged).to.include({ total: 3, totalExact: true });
  });

  it('finds a rare term beyond the walk through the search index, exactly', async () => {
    const page = await list({ search: 'needle' });
    expect(page.rows.map((row) => row.id)).to.deep.equal(ids([e[1]!]));
    expect(page).to.include({ total: 1, totalExact: true });
    expect(page.searchedBackTo).to.equal(undefined);
  });

  it('says how far back it looked when a term is too broad for the index and too rare for the walk', async () => {
    const page = await list({ search: 'middling' });
    expect(page.rows).to.deep.equal([]);
    expect(page).to.include({ total: 0, totalExact: false, searchedBackTo: createdAt(e[8]!) });
    // Looking further back with `to`, as the answer suggests, finds the newest of them first.
    const earlier = await list({ search: 'middling', to: createdAt(e[4]!) });
    expect(earlier.rows.map((row) => row.id)).to.deep.equal(newestFirst(3, 2, 1));
    expect(earlier).to.include({ total: 3, totalExact: false, searchedBackTo: createdAt(e[1]!) });
  });

  it('carries totalExact in the pagination of the API', async () => {
    const response = await h.api('GET', '/api/events?search=order.created&pageSize=2&page=3');
    expect(response.status, response.text).to.equal(200);
    expect(response.body.pagination).to.deep.equal({ total: 12, page: 3, pageSize: 2, totalExact: true });
  });
});
