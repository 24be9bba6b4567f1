import { expect } from 'chai';
import { createLogger } from '../../libs/logging/logger.js';
import { createDedupLedger } from '../../libs/store/dedup-ledger.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../testing/api-harness.js';
import { createDestination, createSource, orgIds, recordTries, seedEvent, type SeededEvent } from '../../testing/event-fixtures.js';
import { createJanitor, type JanitorOptions } from './janitor.js';
import { DAY_MS } from '../../libs/ledger/retention.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';

// Shorter than the relay's own defaults (30 and 90 days), so the janitor the relay runs leaves these events alone.
const PAYLOAD_DAYS = 10;
const EVENT_DAYS = 20;

describeEachStore('Janitor', (target) => {
  let h: ApiHarness;
  let orgA: string;
  let sourceId: string;
  let destination: { id: string; name: string };
  const logger = createLogger({ level: 'silent' });

  before(async function () {
    h = await startApiHarness(this, target);
    orgA = (await orgIds(h)).a;
    sourceId = (await createSource(h, { name: 'Shop', slug: 'shop' })).id;
    destination = await createDestination(h, { name: 'Orders', url: 'https://orders.example.com/in' });
  });

  after(async () => {
    await h?.stop();
  });

  const janitor = (options: Partial<JanitorOptions> = {}) =>
    createJanitor({
      sql: h.relay.store.sql,
      dedup: createDedupLedger(h.relay.store.sql),
      rateWindows: createRateWindows(h.relay.store.sql),
      payloadRetentionMs: PAYLOAD_DAYS * DAY_MS,
      eventRetentionMs: EVENT_DAYS * DAY_MS,
      logger,
      ...options,
    });

  const daysAgo = (days: number) => Date.now() - days * DAY_MS;
  const seedAt = async (days: number, body: string): Promise<SeededEvent> => {
    const event = await seedEvent(h, { orgId: orgA, sourceId, body, receivedAt: daysAgo(days), targets: [{ destinationId: destination.id, destinationName: destination.name }] });
    await recordTries(h, event, event.deliveries[0]!, [{ statusCode: 200, latencyMs: 12, startedAt: event.receivedAt + 10 }]);
    return event;
  };
  const rows = async (table: string, column: string, eventId: string) =>
    Number((await h.relay.store.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?`, [eventId]))[0]!.n);

  describe('payload retention', () => {
    let expired: SeededEvent;
    let fresh: SeededEvent;

    before(async () => {
      expired = await seedAt(PAYLOAD_DAYS + 2, '{"note":"expiring-needle"}');
      fresh = await seedAt(PAYLOAD_DAYS - 2, '{"note":"fresh-needle"}');
      await janitor().runOnce();
    });

    it('removes the payload and its search text, and keeps the event', async () => {
      const [row] = await h.relay.store.sql.all<{ payload: unknown; payload_text: unknown; payload_expired_at: number | null }>(
        'SELECT payload, payload_text, payload_expired_at FROM events WHERE id = ?',
        [expired.eventId],
      );
      expect(row).to.deep.include({ payload: null, payload_text: null });
      expect(row!.payload_expired_at).to.be.a('number');
      const event = await h.api('GET', `/api/events/${expired.eventId}?includePayload=true`);
      expect(event.status).to.equal(200);
      expect(event.body).to.deep.include({ payload: null, payloadExpired: true, status: 'delivered' });
    });

    it('answers 410 PAYLOAD_EXPIRED for /payload and for a replay', async () => {
      for (const [method, path] of [['GET', 'payload'], ['POST', 'replay']] as const) {
        const response = await h.api(method, `/api/events/${expired.eventId}/${path}`);
        expect(response.status, path).to.equal(410);
        expect(response.body).to.deep.equal({ error: 'Gone', message: response.body.message, code: 'PAYLOAD_EXPIRED' });
      }
    });

    it('no longer finds the expired payload by search, and still finds the fresh one', async () => {
      const found = async (term: string) => (await h.api('GET', `/api/events?search=${term}`)).body.data.map((e: { id: string }) => e.id);
      expect(await found('expiring-needle')).to.deep.equal([]);
      expect(await found('fresh-needle')).to.deep.equal([fresh.eventId]);
      expect((await h.api('GET', `/api/events/${fresh.eventId}?includePayload=true`)).body.payloadExpired).to.equal(false);
    });
  });

  describe('event retention', () => {
    it('deletes events past retention with their deliveries and attempts, and keeps younger ones', async () => {
      const old = await seedAt(EVENT_DAYS + 1, '{"old":true}');
      const young = await seedAt(EVENT_DAYS - 1, '{"young":true}');
      const run = await janitor().runOnce();
      expect(run.eventsDeleted).to.equal(1);
      for (const [table, column] of [['events', 'id'], ['deliveries', 'event_id'], ['attempts', 'event_id']]) {
        expect(await rows(table!, column!, old.eventId), table).to.equal(0);
        expect(await rows(table!, column!, young.eventId), table).to.equal(1);
      }
      expect((await h.api('GET', `/api/events/${old.eventId}`)).status).to.equal(404);
    });

    it('works through a backlog in bounded batches until nothing is left', async () => {
      const backlog = [];
      for (let i = 0; i < 5; i += 1) backlog.push(await seedAt(EVENT_DAYS + 3 + i, `{"i":${i}}`));
      for (let i = 0; i < 3; i += 1) backlog.push(await seedAt(PAYLOAD_DAYS + 1 + i, `{"p":${i}}`));
      const run = await janitor({ batchSize: 2 }).runOnce();
      expect(run).to.deep.include({ eventsDeleted: 5, payloadsExpired: 3 });
      expect(await janitor({ batchSize: 2 }).runOnce()).to.deep.include({ eventsDeleted: 0, payloadsExpired: 0 });
    });
  });

  it('purges expired dedup keys, finished rate windows and statistics older than event retention', async () => {
    const now = Date.now();
    const ledger = createDedupLedger(h.relay.store.sql);
    await ledger.claim(sourceId, [{ key: 'gone', windowMs: 1000 }], 'evt_gone', now - 60_000);
    await ledger.claim(sourceId, [{ key: 'live', windowMs: 3_600_000 }], 'evt_live', now);
    const windows = createRateWindows(h.relay.store.sql);
    await windows.hit('janitor-test', 1000, now - 10 * 60_000);
    await windows.hit('janitor-test', 1000, now);
    const stale = await seedAt(EVENT_DAYS - 1, '{}');
    await recordTries(h, stale, stale.deliveries[0]!, [{ statusCode: 200, latencyMs: 5, startedAt: now - (EVENT_DAYS + 2) * DAY_MS }], { firstAttempt: 2 });
    const run = await janitor().runOnce(now);
    expect(run.dedupKeysPurged).to.be.at.least(1);
    expect(run.rateWindowsPurged).to.be.at.least(1);
    expect(run.statsHoursPurged).to.be.at.least(1);
    const keys = await h.relay.store.sql.all<{ dedup_key: string }>('SELECT dedup_key FROM dedup_keys WHERE source_id = ?', [sourceId]);
    expect(keys.map((k) => k.dedup_key)).to.deep.equal(['live']);
    expect(await windows.hit('janitor-test', 1000, now)).to.equal(2);
    const [oldest] = await h.relay.store.sql.all<{ hour_start: number | null }>('SELECT MIN(hour_start) AS hour_start FROM destination_hourly_stats');
    expect(Number(oldest!.hour_start)).to.be.at.least(now - EVENT_DAYS * DAY_MS - 3_600_000);
  });

  it('runs periodically once started, and not after it is stopped', async () => {
    let runs = 0;
    const timers = new ManualTimers();
    const ledger = createDedupLedger(h.relay.store.sql);
    const periodic = janitor({
      dedup: { purgeExpired: (at) => ((runs += 1), ledger.purgeExpired(at)) },
      firstRunDelayMs: 1000,
      intervalMs: 60_000,
      schedule: timers.schedule,
    });
    periodic.start();
    // Each run is async and schedules the next one only when it has finished: wait for that timer, then fire it.
    for (const [n, delayMs] of [[1, 1000], [2, 60_000], [3, 60_000]] as const) {
      await waitFor(`timer before run ${n}`, () => timers.pendingCount === 1, isTrue, 5000, 5);
      timers.advance(delayMs);
      await waitFor(`run ${n}`, () => runs >= n, isTrue, 5000, 5);
    }
    await waitFor('timer after run 3', () => timers.pendingCount === 1, isTrue, 5000, 5);
    await periodic.stop();
    expect(runs).to.equal(3);
    expect(timers.pendingCount).to.equal(0);
    timers.advance(24 * 60 * 60_000);
    expect(runs).to.equal(3);
    expect(timers.pendingCount).to.equal(0);
  });
});
