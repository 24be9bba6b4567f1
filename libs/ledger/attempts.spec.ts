import { expect } from 'chai';
import { newId } from '../ids/ids.js';
import type { AttemptRecord } from '../pipeline/attempt-record.js';
import type { SqlClient } from '../store/sql-client.js';
import { insertEventRow, openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';
import { describeEachStore } from '../testing/store-targets.js';
import { recordAttempts } from './attempts.js';
import { createPendingDeliveries } from './deliveries.js';

describeEachStore('recordAttempts', (target) => {
  let fixture: StoreFixture;
  let sql: SqlClient;
  let sourceId: string;
  const destinations = [newId('dst'), newId('dst')];
  const HOUR = 1_700_000_000_000 - (1_700_000_000_000 % 3_600_000);

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sql = fixture.store.sql;
    sourceId = (await fixture.createSource()).id;
  });

  afterEach(async () => {
    await fixture?.close();
  });

  /** An event with one pending delivery per destination; its delivery ids, in destination order. */
  async function eventWithDeliveries(): Promise<{ eventId: string; deliveryIds: string[] }> {
    const eventId = await insertEventRow(sql, fixture.org.id, sourceId, '{}');
    const targets = destinations.map((destinationId) => ({ destinationId, destinationName: 'Sink' }));
    const [created] = await createPendingDeliveries(sql, [{ orgId: fixture.org.id, eventId, targets }], 0);
    return { eventId, deliveryIds: created!.map((delivery) => delivery.id) };
  }

  const attempt = (event: { eventId: string; deliveryIds: string[] }, index: number, attemptNumber: number, ok: boolean): AttemptRecord => ({
    attemptId: newId('att'),
    deliveryId: event.deliveryIds[index]!,
    eventId: event.eventId,
    orgId: fixture.org.id,
    destinationId: destinations[index]!,
    attemptNumber,
    startedAt: HOUR + attemptNumber * 1_000,
    completedAt: HOUR + attemptNumber * 1_000 + 40,
    ok,
    statusCode: ok ? 200 : 503,
    latencyMs: 40,
    error: ok ? null : 'HTTP 503',
    errorKind: ok ? null : 'http',
    responseBody: '',
    deliveryStatus: ok ? 'delivered' : 'retrying',
    nextAttemptAt: ok ? null : HOUR + 60_000,
  });

  const deliveryStates = (ids: string[]) =>
    sql.all<{ id: string; status: string; attempts: number | string }>(
      `SELECT id, status, attempt_count AS attempts FROM deliveries WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`,
      ids,
    );
  const eventState = async (eventId: string) =>
    (await sql.all<{ status: string; succeeded: number | string; failed: number | string }>(
      'SELECT status, deliveries_succeeded AS succeeded, deliveries_failed AS failed FROM events WHERE id = ?',
      [eventId],
    ))[0]!;
  const attemptCount = async () => Number((await sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM attempts'))[0]!.n);
  const statsAttempts = async () => Number((await sql.all<{ n: number | string | null }>('SELECT SUM(attempts) AS n FROM destination_hourly_stats'))[0]!.n ?? 0);

  it('writes a batch: every attempt, each delivery at its latest attempt, each event settled, and the statistics', async () => {
    const first = await eventWithDeliveries();
    const second = await eventWithDeliveries();
    await recordAttempts(sql, [attempt(first, 0, 1, false), attempt(first, 1, 1, true), attempt(first, 0, 2, true), attempt(second, 0, 1, true), attempt(second, 1, 1, false)]);
    expect(await attemptCount()).to.equal(5);
    const states = await deliveryStates([...first.deliveryIds, ...second.deliveryIds]);
    expect(states.map((d) => [d.status, Number(d.attempts)])).to.have.deep.members([['delivered', 2], ['delivered', 1], ['delivered', 1], ['retrying', 1]]);
    expect(await eventState(first.eventId)).to.deep.include({ status: 'delivered' });
    expect(Number((await eventState(first.eventId)).succeeded)).to.equal(2);
    expect(await eventState(second.eventId)).to.deep.include({ status: 'pending' });
    expect(await statsAttempts()).to.equal(5);
  });

  it('records an attempt once, whether it comes again in a later batch or twice in one', async () => {
    const event = await eventWithDeliveries();
    const retried = attempt(event, 0, 1, false);
    const delivered = attempt(event, 0, 2, true);
    await recordAttempts(sql, [retried, retried, delivered]);
    await recordAttempts(sql, [retried]);
    expect(await attemptCount()).to.equal(2);
    expect((await deliveryStates([event.deliveryIds[0]!])).map((d) => [d.status, Number(d.attempts)])).to.deep.equal([['delivered', 2]]);
    expect(await statsAttempts()).to.equal(2);
  });

  it('never takes a delivery back to an earlier attempt, and skips attempts of deleted deliveries', async () => {
    const event = await eventWithDeliveries();
    await recordAttempts(sql, [attempt(event, 0, 2, true)]);
    await recordAttempts(sql, [attempt(event, 0, 1, false)]);
    expect((await deliveryStates([event.deliveryIds[0]!])).map((d) => [d.status, Number(d.attempts)])).to.deep.equal([['delivered', 2]]);
    await sql.run('DELETE FROM deliveries WHERE id = ?', [event.deliveryIds[1]]);
    await recordAttempts(sql, [attempt(event, 1, 1, true)]);
    expect(await attemptCount()).to.equal(2);
  });
});
