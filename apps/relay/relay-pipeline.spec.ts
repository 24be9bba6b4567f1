import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { hang, resetConnection, respond } from '../../libs/testing/http-sink.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

interface EventRow {
  status: string;
  deliveries_count: number;
  deliveries_succeeded: number;
  deliveries_failed: number;
}

describeEachBackend('relay pipeline end to end', (target) => {
  // On Kafka a new destination's topic joins the deliverer's subscription through a group rebalance.
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  const suite = useRelayHarness(target);
  const sink = suite.sink;

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 3);
  });

  let sourceCounter = 0;
  /** A source routed to each of the given destinations (created from the sinks with the given settings). */
  async function routedSource(destinations: { url: string; retryPolicy?: object; timeoutMs?: number }[]) {
    sourceCounter += 1;
    const source = await suite.harness.api('POST', '/api/sources', { body: { name: `S${sourceCounter}`, slug: `s-${sourceCounter}` } });
    expect(source.status).to.equal(201);
    const ids: string[] = [];
    for (const [index, destination] of destinations.entries()) {
      const created = await suite.harness.api('POST', '/api/destinations', { body: { name: `D${sourceCounter}-${index}`, ...destination } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const route = await suite.harness.api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: created.body.id } });
      expect(route.status).to.equal(201);
      ids.push(created.body.id);
    }
    return { slug: source.body.slug as string, destinationIds: ids };
  }

  async function ingest(slug: string, body: string, contentType = 'application/json') {
    const response = await suite.harness.send(`/ingest/default/${slug}`, body, { 'content-type': contentType });
    expect(response.status, response.text).to.equal(200);
    expect(response.body.status).to.equal('received');
    return response.body.eventId as string;
  }

  async function settledEvent(eventId: string, timeoutMs = settleMs): Promise<EventRow> {
    return waitFor(`event ${eventId} to settle`, async () => {
      const [row] = await suite.harness.relay.store.sql.all<EventRow>(
        'SELECT status, deliveries_count, deliveries_succeeded, deliveries_failed FROM events WHERE id = ?',
        [eventId],
      );
      return row && row.status !== 'pending' ? row : undefined;
    }, isDefined, timeoutMs);
  }

  async function attemptsOf(eventId: string) {
    return suite.harness.relay.store.sql.all<{ attempt_number: number; status_code: number | null; ok: unknown; started_at: number; error_kind: string | null }>(
      'SELECT attempt_number, status_code, ok, started_at, error_kind FROM attempts WHERE event_id = ? ORDER BY attempt_number',
      [eventId],
    );
  }

  it('delivers the exact bytes with a Standard Webhooks signature the receiver can verify', async () => {
    const receiver = await sink([respond(200, { body: 'thanks' })]);
    const { slug, destinationIds } = await routedSource([{ url: `${receiver.url}/hook` }]);
    const body = '{"order":  42, "note": "spacing and unicode \u00e9 kept"}';
    const eventId = await ingest(slug, body);
    const [request] = await receiver.waitForRequests(1, settleMs);
    expect(request!.body.equals(Buffer.from(body))).to.equal(true);
    expect(request!.headers['content-type']).to.equal('application/json');
    expect(request!.headers['x-relay-event-id']).to.equal(eventId);
    const { body: secret } = await suite.harness.api('GET', `/api/destinations/${destinationIds[0]}/signing-secret`);
    const headers = Object.fromEntries(Object.entries(request!.headers).map(([k, v]) => [k, String(v)]));
    expect(() => new Webhook(secret.secret).verify(request!.body.toString('utf8'), headers)).not.to.throw();
    const event = await settledEvent(eventId);
    expect(event).to.include({ status: 'delivered', deliveries_count: 1, deliveries_succeeded: 1 });
  });

  it('when the destination answers 500 then 200, retries after initialDelay and ends delivered', async () => {
    const receiver = await sink([respond(500), respond(200)]);
    const { slug } = await routedSource([{ url: receiver.url, retryPolicy: { initialDelay: 300, maxRetries: 3 } }]);
    const eventId = await ingest(slug, '{"retry":1}');
    const requests = await receiver.waitForRequests(2, settleMs);
    const gap = requests[1]!.receivedAt - requests[0]!.receivedAt;
    expect(gap).to.be.within(280, 1300);
    expect(await settledEvent(eventId)).to.include({ status: 'delivered' });
    const attempts = await attemptsOf(eventId);
    expect(attempts.map((a) => a.status_code)).to.deep.equal([500, 200]);
  });

  it('when every attempt fails, stops after 1 + maxRetries attempts with the event failed', async () => {
    const receiver = await sink([respond(503)]);
    const { slug } = await routedSource([{ url: receiver.url, retryPolicy: { initialDelay: 100, maxRetries: 2, backoffMultiplier: 2 } }]);
    const eventId = await ingest(slug, '{"fail":1}');
    expect(await settledEvent(eventId)).to.include({ status: 'failed', deliveries_failed: 1 });
    const attempts = await attemptsOf(eventId);
    expect(attempts.map((a) => a.status_code)).to.deep.equal([503, 503, 503]);
    const gaps = attempts.slice(1).map((a, i) => a.started_at - attempts[i]!.started_at);
    expect(gaps[0]).to.be.within(90, 1200);
    expect(gaps[1]).to.be.within(190, 1300);
  });

  it('when one of two destinations fails for good, the event ends partial', async () => {
    const good = await sink([respond(204)]);
    const bad = await sink([respond(400)]);
    const { slug } = await routedSource([{ url: good.url }, { url: bad.url, retryPolicy: { maxRetries: 0 } }]);
    const eventId = await ingest(slug, '{"partial":1}');
    expect(await settledEvent(eventId)).to.include({ status: 'partial', deliveries_succeeded: 1, deliveries_failed: 1 });
  });

  it('honours Retry-After on 429 before trying again', async () => {
    const receiver = await sink([respond(429, { headers: { 'retry-after': '1' } }), respond(200)]);
    const { slug } = await routedSource([{ url: receiver.url, retryPolicy: { initialDelay: 100 } }]);
    const eventId = await ingest(slug, '{"slow-down":1}');
    const requests = await receiver.waitForRequests(2, settleMs);
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).to.be.at.least(950);
    expect(await settledEvent(eventId)).to.include({ status: 'delivered' });
  });

  it('records a timeout, a reset connection and a destination that is down as failed attempts, then delivers', async function () {
    this.timeout(settleMs * 4);
    const receiver = await sink([hang(), resetConnection(), respond(200)]);
    const { slug } = await routedSource([{ url: receiver.url, timeoutMs: 1000, retryPolicy: { initialDelay: 100, maxRetries: 5 } }]);
    const eventId = await ingest(slug, '{"flaky":1}');
    expect(await settledEvent(eventId, settleMs * 2)).to.include({ status: 'delivered' });
    const attempts = await attemptsOf(eventId);
    expect(attempts.map((a) => a.error_kind)).to.deep.equal(['timeout', 'reset', null]);

    receiver.goDown();
    const downEvent = await ingest(slug, '{"down":1}');
    await waitFor('a refused attempt', async () => ((await attemptsOf(downEvent)).length > 0 ? true : undefined), isDefined, settleMs);
    receiver.comeUp();
    expect(await settledEvent(downEvent, settleMs * 2)).to.include({ status: 'delivered' });
    expect((await attemptsOf(downEvent))[0]!.error_kind).to.equal('connect');
  });

  it("shows a destination's open circuit on the destination and its health once failures open it", async () => {
    const receiver = await sink([respond(500)]);
    const { slug, destinationIds } = await routedSource([{ url: receiver.url, retryPolicy: { maxRetries: 0 } }]);
    for (let n = 0; n < 6; n += 1) await ingest(slug, `{"breaker":${n}}`);
    const destination = await waitFor('the circuit to open', async () => {
      const { body } = await suite.harness.api('GET', `/api/destinations/${destinationIds[0]}`);
      return body.circuitState === 'open' ? body : undefined;
    }, isDefined, settleMs);
    expect(destination.circuitState).to.equal('open');
    // The breaker opens in the deliverer at once; the attempts behind `status` reach the store via the recorder.
    const health = await waitFor('the failed attempts to be recorded', async () => {
      const { body } = await suite.harness.api('GET', `/api/destinations/${destinationIds[0]}/health`);
      return body.status === 'failing' ? body : undefined;
    }, isDefined, settleMs);
    expect(health).to.include({ circuitState: 'open', status: 'failing' });
  });

  it('stores an event with no routes as delivered with no deliveries', async () => {
    const { slug } = await routedSource([]);
    const eventId = await ingest(slug, 'plain text body', 'text/plain');
    expect(await settledEvent(eventId)).to.include({ status: 'delivered', deliveries_count: 0 });
  });
});
