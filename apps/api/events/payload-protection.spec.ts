import { expect } from 'chai';
import { request } from 'undici';
import { openStoredPayload } from '../../../libs/payload/stored-payload.js';
import type { DeliveryJob } from '../../../libs/pipeline/delivery-job.js';
import { startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination, createRoute, createSource, watchDestinationTopic } from '../../../testing/event-fixtures.js';
import { isTrue, waitFor } from '../../../libs/testing/wait-for.js';

const CARD = '4111111111111111';
const EMAIL = 'ann.buyer@example.com';

describeEachStore('Payload encryption and masking', (target) => {
  let h: ApiHarness;
  let sink: HttpSink;
  let destinationId: string;
  let watcher: Awaited<ReturnType<typeof watchDestinationTopic>>;
  // As a provider would send it: spacing and a number beyond double precision must survive byte for byte.
  const body = `{"order": "ord-77", "card": {"number": "${CARD}", "expiry": "12/30"}, "customer": {"email": "${EMAIL}"}, "ref": 12345678901234567890}`;

  before(async function () {
    h = await startApiHarness(this, target, { role: 'all' });
    sink = await startHttpSink();
    destinationId = (await createDestination(h, { name: 'Payments', url: `${sink.url}/in` })).id;
    watcher = await watchDestinationTopic(h, destinationId);
  });

  after(async () => {
    await watcher?.stop();
    await sink?.close();
    await h?.stop();
  });

  async function sourceWith(slug: string, settings: Record<string, unknown>) {
    const source = await createSource(h, { name: slug, slug, ...settings });
    await createRoute(h, source.id, destinationId);
    return source;
  }

  /** Posts to the public ingest URL and waits until the router stored the event. */
  async function ingest(slug: string, payload: string, contentType = 'application/json'): Promise<string> {
    const response = await request(`${h.url}/ingest/org-a/${slug}`, { method: 'POST', body: payload, headers: { 'content-type': contentType } });
    const answer = (await response.body.json()) as { eventId: string };
    expect(response.statusCode).to.equal(200);
    await waitFor(`event ${answer.eventId} stored`, async () => (await h.api('GET', `/api/events/${answer.eventId}`)).status === 200, isTrue, 5000, 20);
    return answer.eventId;
  }

  const storedRow = async (eventId: string) =>
    (await h.relay.store.sql.all<{ payload: Buffer; payload_text: string | null; payload_sealed: boolean | number }>(
      'SELECT payload, payload_text, payload_sealed FROM events WHERE id = ?',
      [eventId],
    ))[0]!;
  const searchIds = async (term: string) => (await h.api('GET', `/api/events?search=${encodeURIComponent(term)}`)).body.data.map((e: { id: string }) => e.id);

  describe('with encryptFields ["$.card.number"] and maskFields ["$.customer.email"]', () => {
    let eventId: string;

    function expectSealedCopyOf(job: DeliveryJob, sent: Buffer): void {
      expect(job.sealed).to.equal(true);
      expect(sent.toString('latin1')).not.to.include(CARD);
      expect(openStoredPayload(sent, true, h.secrets).toString()).to.equal(body);
    }

    before(async () => {
      await sourceWith('cards', { encryptFields: ['$.card.number'], maskFields: ['$.customer.email'] });
      eventId = await ingest('cards', body);
    });

    it('stores no plaintext card number: the payload read straight from the database is sealed', async () => {
      const row = await storedRow(eventId);
      expect(Boolean(row.payload_sealed)).to.equal(true);
      expect(Buffer.from(row.payload).toString('latin1')).not.to.include(CARD);
      expect(row.payload_text).not.to.include(CARD);
    });

    it('keeps the body sealed in the log: the delivery job carries it sealed, and it opens to the bytes received', async () => {
      const { job, body: sent } = await watcher.waitForJob((candidate) => candidate.eventId === eventId);
      expectSealedCopyOf(job, sent);
    });

    it('decrypts for API reads and shows masked fields as ****', async () => {
      const event = (await h.api('GET', `/api/events/${eventId}?includePayload=true`)).body;
      expect(event.payload.card).to.deep.equal({ number: CARD, expiry: '12/30' });
      expect(event.payload.customer).to.deep.equal({ email: '****' });
      const raw = await h.api('GET', `/api/events/${eventId}/payload`);
      expect(raw.headers['content-type']).to.equal('application/json');
      expect(JSON.parse(raw.text).customer.email).to.equal('****');
      expect(raw.text).to.include(CARD);
      expect(raw.text).not.to.include(EMAIL);
    });

    it('shows masked fields as **** to a transformation tested on the event, as in every other view', async () => {
      const code = 'function transform(request) { console.log(JSON.stringify(request.body.customer)); return request; }';
      const tested = await h.api('POST', '/api/transformations/test', { body: { code, eventId } });
      expect(tested.status, tested.text).to.equal(200);
      expect(tested.body.result.body.customer).to.deep.equal({ email: '****' });
      expect(tested.body.logs).to.deep.equal(['{"email":"****"}']);
      expect(tested.text).not.to.include(EMAIL);
    });

    it('makes neither encrypted nor masked values searchable, and the rest still is', async () => {
      expect(await searchIds(CARD)).not.to.include(eventId);
      expect(await searchIds(EMAIL)).not.to.include(eventId);
      expect(await searchIds('ORD-77')).to.include(eventId);
    });

    it('replays the exact bytes received', async () => {
      const response = await h.api('POST', `/api/events/${eventId}/replay`);
      expect(response.body.deliveriesCreated).to.equal(1);
      // Newest first: the replay's delivery (the running deliverer may have delivered it already).
      const [replayed] = (await h.api('GET', `/api/events/${eventId}/deliveries`)).body.data;
      const replay = await watcher.jobFor(replayed.id);
      expectSealedCopyOf(replay.job, replay.body);
    });
  });

  describe('with maskFields only', () => {
    it('stores the payload as received, and masks it in every API view and in search', async () => {
      await sourceWith('masked', { maskFields: ['$.customer.email', '$.card'] });
      const eventId = await ingest('masked', body);
      const row = await storedRow(eventId);
      expect(Boolean(row.payload_sealed)).to.equal(false);
      expect(Buffer.from(row.payload).toString()).to.equal(body);
      const event = (await h.api('GET', `/api/events/${eventId}?includePayload=true`)).body;
      expect(event.payload).to.deep.include({ order: 'ord-77', card: '****', customer: { email: '****' } });
      expect((await h.api('GET', `/api/events/${eventId}/payload`)).text).not.to.include(CARD);
      expect(await searchIds(EMAIL)).not.to.include(eventId);
      expect((await watcher.waitForJob((job) => job.eventId === eventId)).body.toString()).to.equal(body);
    });

    it('masks form fields, in the event and in /payload', async () => {
      await sourceWith('form', { maskFields: ['$.Token'] });
      const eventId = await ingest('form', 'Token=s3cr3t-value&Amount=10', 'application/x-www-form-urlencoded');
      expect((await h.api('GET', `/api/events/${eventId}?includePayload=true`)).body.payload).to.deep.equal({ Token: '****', Amount: '10' });
      const raw = await h.api('GET', `/api/events/${eventId}/payload`);
      expect(raw.text).to.equal('Token=****&Amount=10');
      expect(await searchIds('s3cr3t')).not.to.include(eventId);
    });
  });
});
