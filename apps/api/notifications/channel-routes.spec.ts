import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { NOTIFICATION_TOPICS } from '../../../libs/notifications/notification-topics.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { respond, startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { describeEachStore, STORE_TARGETS } from '../../../libs/testing/store-targets.js';

describeEachStore('Notification channels API', (target) => {
  let h: ApiHarness;
  let receiver: HttpSink;

  before(async function () {
    h = await startApiHarness(this, target);
    receiver = await startHttpSink([respond(200)]);
  });

  after(async () => {
    await receiver?.close();
    await h?.stop();
  });

  const storedUrl = async (id: string) =>
    (await h.relay.store.sql.all<{ url: string }>('SELECT url_sealed AS url FROM notification_channels WHERE id = ?', [id]))[0]!.url;

  it('creates a channel with every topic by default, its URL sealed and shown as scheme and host only', async () => {
    const channel = await created(h.api, '/api/notification-channels', { name: 'Slack ops', type: 'slack', url: 'https://hooks.example.test/services/T0/B0/XyZ' });
    expect(channel).to.deep.include({ name: 'Slack ops', type: 'slack', url: 'https://hooks.example.test/****', topics: [...NOTIFICATION_TOPICS], enabled: true });
    expect(channel).to.include({ lastDeliveredAt: null, lastFailureAt: null, lastError: null });
    expect(channel.id).to.match(/^nch_[0-9a-z]{26}$/);
    const sealed = await storedUrl(channel.id);
    expect(sealed).not.to.include('XyZ');
    expect(h.unseal(sealed)).to.equal('https://hooks.example.test/services/T0/B0/XyZ');
    expect((await h.api('GET', `/api/notification-channels/${channel.id}`)).body).to.deep.equal(channel);
    expect((await h.api('GET', '/api/notification-channels')).body.data.map((c: { id: string }) => c.id)).to.include(channel.id);
  });

  it('changes topics, name and enabled; the URL sent back as shown keeps the stored one; a type cannot change', async () => {
    const channel = await created(h.api, '/api/notification-channels', { name: 'Hook', type: 'webhook', url: 'https://ops.example.test/a/secret-path' });
    const patched = await h.api('PATCH', `/api/notification-channels/${channel.id}`, { body: { ...channel, id: undefined, topics: ['issue.opened'], enabled: false } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.deep.include({ topics: ['issue.opened'], enabled: false, url: 'https://ops.example.test/****' });
    expect(h.unseal(await storedUrl(channel.id))).to.equal('https://ops.example.test/a/secret-path');
    expect((await h.api('PATCH', `/api/notification-channels/${channel.id}`, { body: { url: 'https://other.example.test/b' } })).body.url).to.equal('https://other.example.test/****');
    const retyped = await h.api('PATCH', `/api/notification-channels/${channel.id}`, { body: { type: 'slack' } });
    expect(retyped.status).to.equal(400);
    expect(retyped.body.code).to.equal('VALIDATION_ERROR');
  });

  it('refuses unknown topics and types, a URL that is not http(s), and unknown fields', async () => {
    const refused = async (body: Record<string, unknown>) => (await h.api('POST', '/api/notification-channels', { body })).body.code;
    expect(await refused({ name: 'x', type: 'webhook', url: 'https://a.example.test/', topics: ['issue.closed'] })).to.equal('VALIDATION_ERROR');
    expect(await refused({ name: 'x', type: 'email', url: 'https://a.example.test/' })).to.equal('VALIDATION_ERROR');
    expect(await refused({ name: 'x', type: 'webhook', url: 'ftp://a.example.test/' })).to.equal('INVALID_URL');
    expect(await refused({ name: 'x', type: 'webhook', url: 'https://a.example.test/', secret: 'mine' })).to.equal('VALIDATION_ERROR');
    expect(await refused({ name: 'x', type: 'webhook', url: 'https://a.example.test/', topics: [] })).to.equal('VALIDATION_ERROR');
  });

  it("reads and rotates a webhook channel's secret with an admin key only; a Slack channel has none", async () => {
    const hook = await created(h.api, '/api/notification-channels', { name: 'Signed', type: 'webhook', url: 'https://ops.example.test/hook' });
    const first = (await h.api('GET', `/api/notification-channels/${hook.id}/signing-secret`)).body.secret;
    expect(first).to.match(/^whsec_/);
    const rotated = await h.api('POST', `/api/notification-channels/${hook.id}/rotate-signing-secret`);
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.equal(first);
    expect((await h.api('GET', `/api/notification-channels/${hook.id}/signing-secret`)).body.secret).to.equal(rotated.body.secret);
    const writer = (await h.api('POST', '/api/keys', { body: { name: 'writer', scope: 'write' } })).body.key;
    expect((await h.api('GET', `/api/notification-channels/${hook.id}/signing-secret`, { key: writer })).status).to.equal(403);
    expect((await h.api('POST', `/api/notification-channels/${hook.id}/rotate-signing-secret`, { key: writer })).status).to.equal(403);
    const slack = await created(h.api, '/api/notification-channels', { name: 'Slack', type: 'slack', url: 'https://hooks.example.test/s' });
    expect((await h.api('GET', `/api/notification-channels/${slack.id}/signing-secret`)).status).to.equal(404);
  });

  it('sends a signed test notification at once, and a failing channel shows its failure', async () => {
    const hook = await created(h.api, '/api/notification-channels', { name: 'Test me', type: 'webhook', url: `${receiver.url}/hook` });
    const secret = (await h.api('GET', `/api/notification-channels/${hook.id}/signing-secret`)).body.secret;
    const sent = await h.api('POST', `/api/notification-channels/${hook.id}/test`);
    expect(sent.body).to.deep.equal({ delivered: true, statusCode: 200, error: null });
    const request = receiver.requests.at(-1)!;
    const body = new Webhook(secret).verify(request.body.toString(), request.headers as Record<string, string>) as { type: string; data: { channel: { id: string } } };
    expect(body.type).to.equal('test');
    expect(body.data.channel.id).to.equal(hook.id);
    expect((await h.api('GET', `/api/notification-channels/${hook.id}`)).body.lastDeliveredAt).to.be.a('string');

    receiver.setBehaviour([respond(500, { body: 'broken' })]);
    const failed = await h.api('POST', `/api/notification-channels/${hook.id}/test`);
    expect(failed.body).to.deep.include({ delivered: false, statusCode: 500 });
    const view = (await h.api('GET', `/api/notification-channels/${hook.id}`)).body;
    expect(view.lastFailureAt).to.be.a('string');
    expect(view.lastError).to.be.a('string').that.is.not.empty;
    receiver.setBehaviour([respond(200)]);
  });

  it("answers another organization's channels with 404, and deletes a channel", async () => {
    const channel = await created(h.api, '/api/notification-channels', { name: 'Mine', type: 'slack', url: 'https://hooks.example.test/m' });
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test'], ['GET', '/signing-secret']] as const) {
      expect((await h.apiB(method, `/api/notification-channels/${channel.id}${path}`, method === 'PATCH' ? { body: { name: 'x' } } : {})).status, `${method} ${path}`).to.equal(404);
    }
    expect((await h.api('DELETE', `/api/notification-channels/${channel.id}`)).status).to.equal(204);
    expect((await h.api('GET', `/api/notification-channels/${channel.id}`)).status).to.equal(404);
  });
});

describe('Notification channel URLs under the default address rules', () => {
  let h: ApiHarness;

  before(async function () {
    h = await startApiHarness(this, STORE_TARGETS[0]!, { env: { RELAY_BLOCK_PRIVATE_DESTINATIONS: undefined } });
  });

  after(async () => {
    await h?.stop();
  });

  it('refuses private and loopback addresses as destinations are, on create and on change', async () => {
    const made = await h.api('POST', '/api/notification-channels', { body: { name: 'Local', type: 'webhook', url: 'http://127.0.0.1:9000/hook' } });
    expect(made.status).to.equal(400);
    expect(made.body.code).to.equal('PRIVATE_DESTINATION');
    const channel = await created(h.api, '/api/notification-channels', { name: 'Public', type: 'slack', url: 'https://93.184.216.34/services/x' });
    const changed = await h.api('PATCH', `/api/notification-channels/${channel.id}`, { body: { url: 'http://10.0.0.8/hook' } });
    expect(changed.body.code).to.equal('PRIVATE_DESTINATION');
  });
});
