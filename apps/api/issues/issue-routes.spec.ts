import { expect } from 'chai';
import { newId } from '../../../libs/ids/ids.js';
import { upsertIssues, type IssueRow } from '../../../libs/issues/issues.js';
import { createdId, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';

describeEachStore('Issues API', (target) => {
  let h: ApiHarness;
  let orgId: string;
  let destinationId: string;
  let otherDestinationId: string;
  const T0 = Date.parse('2026-11-30T12:00:00Z');

  before(async function () {
    h = await startApiHarness(this, target);
    orgId = (await h.relay.store.organizations.bySlug('org-a'))!.id;
  });

  // One issue per destination and kind: each test seeds issues of destinations of its own.
  beforeEach(async () => {
    destinationId = await createdId(h.api, '/api/destinations', { name: 'Orders', url: 'https://orders.example.test/hooks' });
    otherDestinationId = await createdId(h.api, '/api/destinations', { name: 'Billing', url: 'https://billing.example.test/hooks' });
  });

  after(async () => {
    await h?.stop();
  });

  /** Issues as the recorder writes them (its own spec covers how attempts make them). */
  async function seed(rows: Partial<IssueRow>[]): Promise<string[]> {
    const issues = rows.map((row, index): IssueRow => ({
      id: newId('iss'), orgId, destinationId, kind: 'http_5xx', status: 'open', firstSeenAt: T0, lastSeenAt: T0 + index * 1000, failedAttempts: 3,
      lastStatusCode: 503, lastError: 'HTTP 503', sampleEventIds: ['evt_a'], createdAt: T0, updatedAt: T0, ...row,
    }));
    await upsertIssues(h.relay.store.sql, issues);
    return issues.map((issue) => issue.id);
  }

  it('lists the latest seen first, filtered by status, destination and kind, a page at a time', async () => {
    const [older, newer, other] = await seed([{ kind: 'timeout' }, { kind: 'http_4xx', lastStatusCode: 404 }, { destinationId: otherDestinationId, kind: 'connection', status: 'ignored' }]);
    const all = await h.api('GET', '/api/issues?pageSize=100');
    const ids = all.body.data.map((issue: { id: string }) => issue.id).filter((id: string) => [older, newer, other].includes(id));
    expect(ids.indexOf(other)).to.be.below(ids.indexOf(newer));
    expect(ids.indexOf(newer)).to.be.below(ids.indexOf(older));
    expect(ids).to.have.length(3);
    expect((await h.api('GET', `/api/issues?destinationId=${otherDestinationId}`)).body.data.map((i: { id: string }) => i.id)).to.deep.equal([other]);
    expect((await h.api('GET', `/api/issues?destinationId=${destinationId}&kind=timeout`)).body.data.map((i: { id: string }) => i.id)).to.deep.equal([older]);
    expect((await h.api('GET', `/api/issues?destinationId=${otherDestinationId}&status=open`)).body.data).to.deep.equal([]);
    const page = await h.api('GET', `/api/issues?destinationId=${destinationId}&pageSize=1&page=2`);
    expect(page.body.data.map((i: { id: string }) => i.id)).to.deep.equal([older]);
    expect(page.body.pagination).to.include({ page: 2, pageSize: 1, total: 2 });
    expect((await h.api('GET', '/api/issues?status=closed')).status).to.equal(400);
    expect((await h.api('GET', '/api/issues?severity=high')).status).to.equal(400);
  });

  it('shows an issue with its figures, and answers 404 to another organization', async () => {
    const [id] = await seed([{ sampleEventIds: ['evt_b', 'evt_a'] }]);
    const issue = await h.api('GET', `/api/issues/${id}`);
    expect(issue.body).to.deep.equal({
      id, destinationId, kind: 'http_5xx', status: 'open', firstSeenAt: new Date(T0).toISOString(), lastSeenAt: new Date(T0).toISOString(), failedAttempts: 3,
      lastStatusCode: 503, lastError: 'HTTP 503', sampleEventIds: ['evt_b', 'evt_a'], createdAt: new Date(T0).toISOString(), updatedAt: new Date(T0).toISOString(),
    });
    expect((await h.apiB('GET', `/api/issues/${id}`)).status).to.equal(404);
    expect((await h.apiB('PATCH', `/api/issues/${id}`, { body: { status: 'ignored' } })).status).to.equal(404);
    expect((await h.apiB('GET', '/api/issues')).body.data).to.deep.equal([]);
  });

  it('acknowledges, ignores and resolves by PATCH; resolving queues issue.resolved for the channels', async () => {
    await h.api('POST', '/api/notification-channels', { body: { name: 'Ops', type: 'slack', url: 'https://hooks.example.test/services/x', topics: ['issue.resolved'] } });
    const [id] = await seed([{}]);
    expect((await h.api('PATCH', `/api/issues/${id}`, { body: { status: 'acknowledged' } })).body.status).to.equal('acknowledged');
    expect((await h.api('PATCH', `/api/issues/${id}`, { body: { status: 'ignored' } })).body.status).to.equal('ignored');
    const resolved = await h.api('PATCH', `/api/issues/${id}`, { body: { status: 'resolved' } });
    expect(resolved.body.status).to.equal('resolved');
    const queued = await h.relay.store.sql.all<{ body: string }>(`SELECT body FROM notification_outbox WHERE topic = 'issue.resolved'`);
    expect(queued.map((row) => JSON.parse(row.body).data.id)).to.include(id);
    expect((await h.api('PATCH', `/api/issues/${id}`, { body: { status: 'closed' } })).status).to.equal(400);
    expect((await h.api('PATCH', `/api/issues/${id}`, { body: { status: 'open', note: 'x' } })).status).to.equal(400);
  });

  it('replays an issue as a paced replay job filtered by the issue, to its destination', async () => {
    const [id] = await seed([{}]);
    const replay = await h.api('POST', `/api/issues/${id}/replay`, { body: { maxPerSecond: 5 } });
    expect(replay.status, replay.text).to.equal(202);
    expect(replay.body).to.deep.include({ filter: { issueId: id }, destinationIds: [destinationId], maxPerSecond: 5, matched: 0, status: 'completed' });
    expect((await h.api('GET', `/api/replays/${replay.body.id}`)).body.filter).to.deep.equal({ issueId: id });
    expect((await h.apiB('POST', `/api/issues/${id}/replay`)).status).to.equal(404);
  });
});
