import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { BACKEND_TARGETS, embeddedLogOn } from '../../libs/testing/backend-targets.js';
import { respond, type HttpSink, type RecordedRequest } from '../../libs/testing/http-sink.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

/** The embedded log on both stores, and Kafka beside PostgreSQL. */
const TARGETS = [...BACKEND_TARGETS, embeddedLogOn(STORE_TARGETS[1]!)];

for (const target of TARGETS) {
  describe(`operators hear of failing destinations [${target.name}]`, function () {
    // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
    const settleMs = target.name.includes('Kafka') ? 40_000 : 15_000;
    const suite = useRelayHarness(target);
    let webhookReceiver: HttpSink;
    let slackReceiver: HttpSink;
    let webhookSecret: string;

    before(async function () {
      this.timeout(30_000);
      webhookReceiver = await suite.sink([respond(200)]);
      slackReceiver = await suite.sink([respond(200, { body: 'ok' })]);
      const { api } = suite.harness;
      const webhook = await api('POST', '/api/notification-channels', { body: { name: 'On-call', type: 'webhook', url: `${webhookReceiver.url}/relay` } });
      expect(webhook.status, webhook.text).to.equal(201);
      expect(webhook.body.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/\*\*\*\*$/);
      const slack = await api('POST', '/api/notification-channels', { body: { name: 'Slack', type: 'slack', url: `${slackReceiver.url}/services/T0/B0/secret` } });
      expect(slack.status, slack.text).to.equal(201);
      webhookSecret = (await api('GET', `/api/notification-channels/${webhook.body.id}/signing-secret`)).body.secret;
    });

    async function routedDestination(name: string, url: string, settings: Record<string, unknown>) {
      const { api } = suite.harness;
      const slug = name.toLowerCase().replace(/\W+/g, '-');
      const source = await api('POST', '/api/sources', { body: { name, slug } });
      const destination = await api('POST', '/api/destinations', { body: { name, url, ...settings } });
      expect(destination.status, destination.text).to.equal(201);
      expect((await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);
      return { slug, destinationId: destination.body.id as string };
    }

    async function ingest(slug: string, body: string): Promise<string> {
      const response = await suite.harness.send(`/ingest/default/${slug}`, body);
      expect(response.status, response.text).to.equal(200);
      return response.body.eventId as string;
    }

    /** The webhook notifications about `subjectId` so far, each verified with the standardwebhooks library. */
    const verifiedNotifications = (subjectId: string) =>
      webhookReceiver.requests
        .map((request: RecordedRequest) => new Webhook(webhookSecret).verify(request.body.toString(), request.headers as Record<string, string>) as { type: string; data: any })
        .filter((body) => body.data.id === subjectId || body.data.destinationId === subjectId);

    const notificationOf = (subjectId: string, type: string, timeoutMs = settleMs) =>
      waitFor(`a ${type} notification`, () => verifiedNotifications(subjectId).find((body) => body.type === type), isDefined, timeoutMs);

    it('opens an issue on a 500 and notifies both channels; 10 successes resolve it and say so; its replay resends the failed delivery', async function () {
      this.timeout(settleMs * 6);
      const destinationSink = await suite.sink([respond(500, { body: 'down' })]);
      const { slug, destinationId } = await routedDestination('Failing orders', destinationSink.url, { retryPolicy: { maxRetries: 0 } });
      const failedEvent = await ingest(slug, '{"n":0}');

      const opened = await notificationOf(destinationId, 'issue.opened');
      expect(opened.data).to.include({ destinationId, kind: 'http_5xx', status: 'open', failedAttempts: 1, lastStatusCode: 500 });
      expect(opened.data.sampleEventIds).to.deep.equal([failedEvent]);
      const slackText = await waitFor('the Slack message', () => slackReceiver.requests.map((r) => JSON.parse(r.body.toString()) as { text: string }).find((m) => m.text.includes(destinationId)), isDefined, settleMs);
      expect(slackText.text).to.contain('Issue opened').and.contain('http_5xx');

      const { api } = suite.harness;
      const listed = await api('GET', `/api/issues?status=open&destinationId=${destinationId}`);
      expect(listed.body.data).to.have.length(1);
      const issueId = listed.body.data[0].id as string;
      expect(listed.body.data[0]).to.include({ id: opened.data.id, kind: 'http_5xx' });

      destinationSink.setBehaviour([respond(200)]);
      for (let n = 1; n <= 10; n++) await ingest(slug, `{"n":${n}}`);
      const resolved = await notificationOf(destinationId, 'issue.resolved');
      expect(resolved.data).to.include({ id: issueId, status: 'resolved' });
      expect((await api('GET', `/api/issues/${issueId}`)).body.status).to.equal('resolved');

      const replay = await api('POST', `/api/issues/${issueId}/replay`, { body: {} });
      expect(replay.status, replay.text).to.equal(202);
      expect(replay.body).to.deep.include({ filter: { issueId }, destinationIds: [destinationId], matched: 1 });
      await waitFor('the failed event to be sent again', () => destinationSink.requests.filter((r) => r.body.toString() === '{"n":0}').length, (count) => count === 2, settleMs);

      const channels = await api('GET', '/api/notification-channels');
      for (const channel of channels.body.data) expect(channel.lastDeliveredAt, channel.name).to.be.a('string');
      const exposition = await (await fetch(`${suite.harness.relay.metricsUrl}/metrics`)).text();
      expect(sampleSum(exposition, 'relay_notifications_total', { outcome: 'delivered' })).to.be.at.least(4);
    });

    it('warns at half of autoDisableAfterSeconds, disables at all of it, and delivers every held job once enabled again', async function () {
      // The destination's circuit opens as it fails, and spaces its attempts out beyond the retry delay.
      const clockMs = 20_000 + settleMs * 2;
      this.timeout(clockMs * 3);
      const destinationSink = await suite.sink([respond(503)]);
      // An attempt every 2 s at most: the warning comes at the first failure 10 s into the run, the disabling at 20 s or later.
      const { slug, destinationId } = await routedDestination('Failing invoices', destinationSink.url, {
        autoDisableAfterSeconds: 20,
        retryPolicy: { maxRetries: 20, initialDelay: 2000, maxDelay: 2000, backoffMultiplier: 1 },
      });
      const firstEvent = await ingest(slug, '{"invoice":1}');
      const warning = await notificationOf(destinationId, 'destination.auto_disable_warning', clockMs);
      expect(warning.data).to.include({ id: destinationId, enabled: true, autoDisableAfterSeconds: 20 });
      const disabled = await notificationOf(destinationId, 'destination.disabled', clockMs);
      expect(disabled.data).to.include({ id: destinationId, enabled: false, disabledReason: 'failing' });
      expect(Date.parse(disabled.data.disabledAt) - Date.parse(disabled.data.failingSince)).to.be.at.least(20_000);

      const { api } = suite.harness;
      const view = await waitFor('the destination to show as disabled', async () => (await api('GET', `/api/destinations/${destinationId}`)).body, (body) => body.enabled === false, settleMs);
      expect(view).to.include({ disabledReason: 'failing' });
      const heldEvent = await ingest(slug, '{"invoice":2}');

      destinationSink.setBehaviour([respond(200)]);
      expect((await api('PATCH', `/api/destinations/${destinationId}`, { body: { enabled: true } })).body).to.include({ enabled: true, disabledReason: null });
      for (const eventId of [firstEvent, heldEvent]) {
        await waitFor(`${eventId} to be delivered`, async () => (await api('GET', `/api/events/${eventId}`)).body.status, (status) => status === 'delivered', settleMs);
      }
    });
  });
}
