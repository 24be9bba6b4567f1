import { expect } from 'chai';
import { newId } from '../ids/ids.js';
import { createPendingDeliveries, createTransformationFailures } from '../ledger/deliveries.js';
import { recordAttempts } from '../ledger/attempts.js';
import type { AttemptRecord } from '../pipeline/attempt-record.js';
import type { SqlClient } from '../store/sql-client.js';
import { destinationRow, insertEventRow, openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';
import { describeEachStore } from '../testing/store-targets.js';
import { listIssues, setIssueStatus } from './issues.js';
import { restartStreak } from './failure-streaks.js';

describeEachStore('issues and auto-disable, folded into the recorder batch', (target) => {
  let fixture: StoreFixture;
  let sql: SqlClient;
  let sourceId: string;
  let destinationId: string;
  const T0 = 1_800_000_000_000;

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sql = fixture.store.sql;
    sourceId = (await fixture.createSource()).id;
    const row = destinationRow(fixture.org.id, 'sealed', { autoDisableAfterSeconds: 20 });
    destinationId = (await fixture.store.destinations.insert(row)).id;
    // A channel for every topic, so the outbox shows what would be sent.
    await sql.run(
      `INSERT INTO notification_channels (id, org_id, name, type, url_sealed, url_shown, topics, enabled, created_at, updated_at) VALUES (?, ?, 'ops', 'slack', 'x', 'x', ?, ?, 0, 0)`,
      [newId('nch'), fixture.org.id, JSON.stringify(['issue.opened', 'issue.reopened', 'issue.resolved', 'destination.disabled', 'destination.auto_disable_warning']), sql.bool(true)],
    );
  });

  afterEach(async () => {
    await fixture?.close();
  });

  /** One attempt of a new event's delivery, completed `seconds` after T0. */
  async function attempt(seconds: number, outcome: { ok: true } | { ok: false; statusCode: number | null; errorKind: string }): Promise<AttemptRecord> {
    const eventId = await insertEventRow(sql, fixture.org.id, sourceId, '{}');
    const [created] = await createPendingDeliveries(sql, [{ orgId: fixture.org.id, eventId, targets: [{ destinationId, destinationName: 'Sink' }] }], 0);
    const delivery = created![0];
    const at = T0 + seconds * 1000;
    return {
      attemptId: newId('att'), deliveryId: delivery!.id, eventId, orgId: fixture.org.id, destinationId, attemptNumber: 1, startedAt: at - 10, completedAt: at,
      ok: outcome.ok, statusCode: outcome.ok ? 200 : outcome.statusCode, latencyMs: 10, error: outcome.ok ? null : `failed ${outcome.errorKind}`,
      errorKind: outcome.ok ? null : outcome.errorKind, responseBody: '', deliveryStatus: outcome.ok ? 'delivered' : 'retrying', nextAttemptAt: outcome.ok ? null : at + 1000,
    };
  }
  const fail500 = (seconds: number) => attempt(seconds, { ok: false, statusCode: 500, errorKind: 'http_status' });
  const succeed = (seconds: number) => attempt(seconds, { ok: true });
  const issues = async () => (await listIssues(sql, fixture.org.id, {}, { page: 1, pageSize: 100 })).rows;
  const outboxTopics = async () => (await sql.all<{ topic: string }>('SELECT topic FROM notification_outbox ORDER BY created_at, notification_id')).map((row) => row.topic);
  const destination = async () => (await fixture.store.destinations.findOneBy(fixture.org.id, { id: destinationId }))!;

  it('opens one issue per destination and kind, counts later failures in it and notifies only its opening', async () => {
    await recordAttempts(sql, [await fail500(1), await fail500(2), await attempt(3, { ok: false, statusCode: null, errorKind: 'timeout' })]);
    await recordAttempts(sql, [await fail500(4), await attempt(5, { ok: false, statusCode: 404, errorKind: 'http_status' })]);
    const byKind = Object.fromEntries((await issues()).map((issue) => [issue.kind, issue]));
    expect(Object.keys(byKind).sort()).to.deep.equal(['http_4xx', 'http_5xx', 'timeout']);
    expect(byKind.http_5xx).to.include({ status: 'open', failedAttempts: 3, lastStatusCode: 500, firstSeenAt: T0 + 1000, lastSeenAt: T0 + 4000 });
    expect(byKind.http_5xx!.sampleEventIds).to.have.length(3);
    expect(await outboxTopics()).to.deep.equal(['issue.opened', 'issue.opened', 'issue.opened']);
  });

  it('counts an attempt recorded twice once', async () => {
    const failure = await fail500(1);
    await recordAttempts(sql, [failure, failure]);
    await recordAttempts(sql, [failure]);
    expect((await issues())[0]).to.include({ failedAttempts: 1 });
  });

  it('resolves after 10 successes in a row, and a new failure reopens the issue', async () => {
    await recordAttempts(sql, [await fail500(1)]);
    const nine = await Promise.all(Array.from({ length: 9 }, (_, i) => succeed(2 + i)));
    await recordAttempts(sql, nine);
    expect((await issues())[0]).to.include({ status: 'open' });
    await recordAttempts(sql, [await succeed(11)]);
    expect((await issues())[0]).to.include({ status: 'resolved' });
    await recordAttempts(sql, [await fail500(12)]);
    expect((await issues())[0]).to.include({ status: 'open', failedAttempts: 2 });
    expect(await outboxTopics()).to.deep.equal(['issue.opened', 'issue.resolved', 'issue.reopened']);
  });

  it('keeps an ignored issue ignored, counting its failures', async () => {
    await recordAttempts(sql, [await fail500(1)]);
    const [issue] = await issues();
    await setIssueStatus(sql, fixture.org.id, issue!.id, 'ignored', T0);
    await recordAttempts(sql, [await fail500(2)]);
    await recordAttempts(sql, await Promise.all(Array.from({ length: 10 }, (_, i) => succeed(3 + i))));
    expect((await issues())[0]).to.include({ status: 'ignored', failedAttempts: 2 });
  });

  it('warns once at half of autoDisableAfterSeconds and disables at all of it with at least 5 failures', async () => {
    const disabledEarly = await recordAttempts(sql, await Promise.all([0, 4, 8, 10, 12].map(fail500)));
    expect(disabledEarly).to.deep.equal([]);
    expect(await outboxTopics()).to.deep.equal(['issue.opened', 'destination.auto_disable_warning']);
    expect(await recordAttempts(sql, [await fail500(19)])).to.deep.equal([]);
    expect((await destination()).enabled).to.equal(true);
    const disabled = await recordAttempts(sql, [await fail500(20)]);
    expect(disabled).to.deep.equal([{ orgId: fixture.org.id, destinationId }]);
    expect(await destination()).to.include({ enabled: false, disabledReason: 'failing' });
    expect(await outboxTopics()).to.deep.equal(['issue.opened', 'destination.auto_disable_warning', 'destination.disabled']);
    const [body] = await sql.all<{ body: string }>(`SELECT body FROM notification_outbox WHERE topic = 'destination.disabled'`);
    expect(JSON.parse(body!.body)).to.deep.include({ type: 'destination.disabled' });
    expect(JSON.parse(body!.body).data).to.include({ id: destinationId, disabledReason: 'failing', enabled: false });
  });

  it('needs 5 failed attempts however long the destination has failed', async () => {
    expect(await recordAttempts(sql, await Promise.all([0, 30, 60, 90].map(fail500)))).to.deep.equal([]);
    expect(await recordAttempts(sql, [await fail500(120)])).to.have.length(1);
  });

  it('restarts the clock on a success, and on being enabled again', async () => {
    await recordAttempts(sql, await Promise.all([0, 5, 10, 15].map(fail500)));
    await recordAttempts(sql, [await succeed(16)]);
    expect(await recordAttempts(sql, await Promise.all([17, 25, 30, 35, 36].map(fail500)))).to.deep.equal([]);
    await restartStreak(sql, destinationId);
    expect(await recordAttempts(sql, await Promise.all([37, 38, 39, 40, 56].map(fail500)))).to.deep.equal([]);
    expect(await recordAttempts(sql, [await fail500(57)])).to.have.length(1);
    // A warning for each of the three runs of failures: after 16 s, after 36 s, after 56 s (restarted at 37).
    expect((await outboxTopics()).filter((topic) => topic === 'destination.auto_disable_warning')).to.have.length(3);
  });

  it("counts transformation failures in the destination's transformation issue, leaving its clock alone", async () => {
    const eventId = await insertEventRow(sql, fixture.org.id, sourceId, '{}');
    const report = { id: 'trs_1', error: { name: 'TypeError', message: 'x is undefined' }, logs: [] };
    await sql.transaction((tx) => createTransformationFailures(tx, [{ orgId: fixture.org.id, eventId, destinationId, destinationName: 'Sink', report }], T0));
    const [issue] = await issues();
    expect(issue).to.include({ kind: 'transformation', status: 'open', failedAttempts: 1, lastError: 'TypeError: x is undefined', lastStatusCode: null });
    expect(issue!.sampleEventIds).to.deep.equal([eventId]);
    expect(await outboxTopics()).to.deep.equal(['issue.opened']);
    expect(await sql.all('SELECT * FROM destination_failure_streaks')).to.deep.equal([]);
  });

  it('opens no issue for attempts the destination is not to blame for, nor for a destination that is gone', async () => {
    await recordAttempts(sql, [await attempt(1, { ok: false, statusCode: null, errorKind: 'destination_deleted' })]);
    expect(await issues()).to.deep.equal([]);
  });
});
