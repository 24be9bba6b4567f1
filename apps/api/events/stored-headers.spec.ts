import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { apiClient } from '../../../testing/api-client.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { waitFor } from '../../../libs/testing/wait-for.js';
import { created, startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';

const SECRET = 'hmac-secret-for-header-views';
const BODY = '{"order":"ord_1"}';
const SIGNATURE = createHmac('sha256', SECRET).update(BODY).digest('hex');
const RECEIVED = {
  authorization: 'Bearer provider-token-abcd1234',
  'proxy-authorization': 'Basic cHJveHk6cGFzc3dvcmQ=',
  cookie: 'session=0123456789abcdef',
  'x-api-key': 'key-live-0123456789wxyz',
  'x-order-signature': SIGNATURE,
  'x-request-id': 'req-visible-42',
};

/** `****` and the last 4 characters: the value itself never appears. */
const masked = (value: string) => `****${value.slice(-4)}`;

describeEachStore('Credentials in stored event headers', (target) => {
  let h: ApiHarness;
  let eventId: string;
  let sourceId: string;

  before(async function () {
    h = await startApiHarness(this, target, { role: 'all' });
    sourceId = (
      await created(h.api, '/api/sources', {
        name: 'Orders',
        slug: 'orders',
        verificationConfig: { type: 'hmac', secret: SECRET, algorithm: 'sha256', header: 'X-Order-Signature', encoding: 'hex' },
        rejectInvalidSignatures: true,
      })
    ).id;
    const ingest = apiClient(h.url, null);
    const answer = await ingest('POST', '/ingest/org-a/orders', { rawBody: BODY, headers: { 'content-type': 'application/json', ...RECEIVED } });
    // Refused signatures answer 400: a 200 shows verification read the raw signature header.
    expect(answer.status, answer.text).to.equal(200);
    eventId = answer.body.eventId;
    await waitFor('the event to be stored', () => h.api('GET', `/api/events/${eventId}`), (r) => r.status === 200);
  });

  after(async () => {
    await h?.stop();
  });

  function expectMasked(headers: Record<string, string>) {
    expect(headers).to.deep.include({
      authorization: masked(RECEIVED.authorization),
      'proxy-authorization': masked(RECEIVED['proxy-authorization']),
      cookie: masked(RECEIVED.cookie),
      'x-api-key': masked(RECEIVED['x-api-key']),
      'x-order-signature': masked(SIGNATURE),
      'x-request-id': 'req-visible-42',
    });
  }

  it('GET /api/events/:id shows credentials and the signature header as **** and their last 4 characters', async () => {
    const response = await h.api('GET', `/api/events/${eventId}?includePayload=true&includeDeliveries=true`);
    expectMasked(response.body.headers);
    expect(response.body.signatureValid).to.equal(true);
    expect(response.text).not.to.include('provider-token').and.not.to.include(SIGNATURE);
  });

  it('GET /api/events (list) masks them the same way', async () => {
    const response = await h.api('GET', `/api/events?sourceId=${sourceId}`);
    expect(response.body.data).to.have.length(1);
    expectMasked(response.body.data[0].headers);
    expect(response.text).not.to.include('0123456789abcdef').and.not.to.include(SIGNATURE);
  });

  it('keeps the raw values in the store, where replay and delivery read them', async () => {
    const [row] = await h.relay.store.sql.all<{ headers: string }>('SELECT headers FROM events WHERE id = ?', [eventId]);
    expect(JSON.parse(row!.headers)).to.deep.include(RECEIVED);
  });

  it('shows a short credential as **** alone, as it does short secrets', async () => {
    const ingest = apiClient(h.url, null);
    const body = '{"order":"ord_2"}';
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    const answer = await ingest('POST', '/ingest/org-a/orders', {
      rawBody: body,
      headers: { 'content-type': 'application/json', 'x-order-signature': signature, 'x-api-key': 'k-1' },
    });
    expect(answer.status, answer.text).to.equal(200);
    const event = await waitFor('the event', () => h.api('GET', `/api/events/${answer.body.eventId}`), (r) => r.status === 200);
    expect(event.body.headers['x-api-key']).to.equal('****');
  });
});
