import { expect } from 'chai';
import { createHttpSender } from '../../../libs/delivery/send-request.js';
import { createLogger } from '../../../libs/logging/logger.js';
import { createRelayMetrics } from '../../../libs/metrics/relay-metrics.js';
import { insertChannel, selectChannel, type ChannelRow } from '../../../libs/notifications/channels.js';
import { enqueueNotification } from '../../../libs/notifications/outbox.js';
import { createSecretBox } from '../../../libs/secrets/secret-box.js';
import { respond, startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { sampleSum } from '../../../libs/testing/metric-samples.js';
import { destinationRow, openStoreFixture, type StoreFixture } from '../../../libs/testing/store-fixtures.js';
import { upsertIssues } from '../../../libs/issues/issues.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { createNotifier } from './notifier.js';

describeEachStore('the notifier', (target) => {
  let fixture: StoreFixture;
  let sink: HttpSink;
  const secrets = createSecretBox(Buffer.alloc(32, 3));
  const sender = createHttpSender({ blockPrivateDestinations: false });
  let clock = 1_800_000_000_000;

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sink = await startHttpSink([respond(503)]);
  });

  afterEach(async () => {
    await sink?.close();
    await fixture?.close();
  });

  after(async () => {
    await sender.close();
  });

  async function channel(type: ChannelRow['type'], topics: ChannelRow['topics']): Promise<string> {
    const id = `nch_${type}${Math.random().toString(36).slice(2, 10)}`;
    await insertChannel(fixture.store.sql, {
      id, orgId: fixture.org.id, name: type, type, urlSealed: secrets.seal(`${sink.url}/${type}`), urlShown: `${sink.url}/****`, topics, enabled: true,
      signingSecretSealed: type === 'webhook' ? secrets.seal('whsec_' + Buffer.alloc(32, 1).toString('base64')) : null,
      lastDeliveredAt: null, lastFailureAt: null, lastError: null, createdAt: clock, updatedAt: clock,
    });
    return id;
  }

  function notifier(maxAttempts = 3) {
    const metrics = createRelayMetrics({ defaultMetrics: false });
    const run = createNotifier({
      sql: fixture.store.sql, secrets, sender, metrics, logger: createLogger({ level: 'silent' }), now: () => clock, maxAttempts,
      retryBackoff: { initialMs: 1000, maxMs: 60_000 },
    });
    return { run, exposition: () => metrics.registry.metrics() };
  }

  const queued = async () => Number((await fixture.store.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM notification_outbox'))[0]!.n);

  it('sends only to channels of the topic; retries a failure with backoff, then gives it up; the channel shows it', async () => {
    const webhook = await channel('webhook', ['issue.opened']);
    await channel('slack', ['destination.disabled']);
    await enqueueNotification(fixture.store.sql, { orgId: fixture.org.id, topic: 'issue.opened', data: { id: 'iss_1' }, at: clock });
    expect(await queued()).to.equal(1);
    const { run, exposition } = notifier();

    expect(await run.runOnce()).to.equal(1);
    expect(sink.requests).to.have.length(1);
    expect(sink.requests[0]!.url).to.equal('/webhook');
    const failing = (await selectChannel(fixture.store.sql, fixture.org.id, webhook))!;
    expect(failing).to.include({ lastFailureAt: clock, lastDeliveredAt: null });
    expect(failing.lastError).to.contain('503');

    // Not due again before its backoff (1 s, then 2 s).
    expect(await run.runOnce()).to.equal(0);
    clock += 1000;
    expect(await run.runOnce()).to.equal(1);
    clock += 1999;
    expect(await run.runOnce()).to.equal(0);
    clock += 1;
    expect(await run.runOnce()).to.equal(1);
    expect(await queued()).to.equal(0);
    expect(sink.requests).to.have.length(3);
    const text = await exposition();
    expect(sampleSum(text, 'relay_notifications_total', { outcome: 'retried' })).to.equal(2);
    expect(sampleSum(text, 'relay_notifications_total', { outcome: 'failed' })).to.equal(1);
  });

  it('delivers once the channel answers, and counts open issues by kind', async () => {
    const slack = await channel('slack', ['issue.opened']);
    await enqueueNotification(fixture.store.sql, { orgId: fixture.org.id, topic: 'issue.opened', data: { kind: 'timeout', destinationId: 'dst_1', failedAttempts: 1 }, at: clock });
    sink.setBehaviour([respond(200)]);
    const destination = await fixture.store.destinations.insert(destinationRow(fixture.org.id, 'sealed'));
    await upsertIssues(fixture.store.sql, [{ id: 'iss_open', orgId: fixture.org.id, destinationId: destination.id, kind: 'timeout', status: 'open', firstSeenAt: clock,
      lastSeenAt: clock, failedAttempts: 1, lastStatusCode: null, lastError: 'timed out', sampleEventIds: [], createdAt: clock, updatedAt: clock }]);
    const { run, exposition } = notifier();
    await run.runOnce();
    expect(JSON.parse(sink.requests[0]!.body.toString()).text).to.contain('Issue opened').and.contain('timeout');
    expect((await selectChannel(fixture.store.sql, fixture.org.id, slack))!.lastDeliveredAt).to.equal(clock);
    expect(await queued()).to.equal(0);
    const text = await exposition();
    expect(sampleSum(text, 'relay_notifications_total', { outcome: 'delivered' })).to.equal(1);
    expect(text).to.match(/^relay_issues_open\{kind="timeout"\} 1$/m);
    expect(text).to.match(/^relay_issues_open\{kind="http_5xx"\} 0$/m);
  });
});
