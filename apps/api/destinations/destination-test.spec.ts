import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { hang, respond, startHttpSink, type HttpSink } from '../../../libs/testing/http-sink.js';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createDestination } from '../../../testing/event-fixtures.js';

describeEachStore('POST /api/destinations/:id/test', (target) => {
  let h: ApiHarness;
  let sink: HttpSink;

  before(async function () {
    h = await startApiHarness(this, target);
    sink = await startHttpSink();
  });

  after(async () => {
    await sink?.close();
    await h?.stop();
  });

  const test = (id: string, body?: unknown) => h.api('POST', `/api/destinations/${id}/test`, body === undefined ? {} : { body });

  it('sends one real request as a delivery would: method, headers, auth, signature; and answers the success shape', async () => {
    sink.setBehaviour([respond(201, { body: 'created here' })]);
    const destination = await createDestination(h, {
      name: 'Full',
      url: `${sink.url}/hooks?team=a`,
      method: 'PUT',
      headers: { 'X-Team': 'payments' },
      authType: 'bearer',
      authConfig: { token: 'tok-123456' },
    });
    const before = sink.requests.length;
    const response = await test(destination.id);
    expect(response.status, response.text).to.equal(200);
    expect(Object.keys(response.body)).to.have.members(['success', 'statusCode', 'latency', 'responseBody', 'message']);
    expect(response.body).to.deep.include({ success: true, statusCode: 201, responseBody: 'created here' });
    expect(response.body.latency).to.be.a('number').at.least(0);
    expect(response.body.message).to.be.a('string');
    expect(sink.requests.length).to.equal(before + 1);
    const received = sink.requests.at(-1)!;
    expect(received.method).to.equal('PUT');
    expect(received.url).to.equal('/hooks?team=a');
    expect(received.headers).to.include({ 'x-team': 'payments', authorization: 'Bearer tok-123456', 'x-relay-test': 'true', 'content-type': 'application/json' });
    const sample = JSON.parse(received.body.toString());
    expect(sample.type).to.equal('relay.test');
    const { secret } = (await h.api('GET', `/api/destinations/${destination.id}/signing-secret`)).body;
    expect(() => new Webhook(secret).verify(received.body.toString(), received.headers as Record<string, string>)).not.to.throw();
  });

  it('sends the given payload instead of the sample', async () => {
    sink.setBehaviour([respond(200)]);
    const destination = await createDestination(h, { name: 'Payload', url: `${sink.url}/p` });
    const response = await test(destination.id, { payload: { hello: 'world', n: [1, 2] } });
    expect(response.body.success).to.equal(true);
    expect(JSON.parse(sink.requests.at(-1)!.body.toString())).to.deep.equal({ hello: 'world', n: [1, 2] });
  });

  it('answers the failure shape for a non-2xx answer', async () => {
    sink.setBehaviour([respond(503, { body: 'down for maintenance' })]);
    const destination = await createDestination(h, { name: 'Down', url: `${sink.url}/down` });
    const response = await test(destination.id);
    expect(response.status).to.equal(200);
    expect(Object.keys(response.body)).to.have.members(['success', 'statusCode', 'latency', 'error', 'message']);
    expect(response.body).to.deep.include({ success: false, statusCode: 503, error: 'HTTP 503' });
  });

  it("answers a failure when the destination does not answer within its timeout", async () => {
    sink.setBehaviour([hang()]);
    const destination = await createDestination(h, { name: 'Slow', url: `${sink.url}/slow`, timeoutMs: 1000 });
    const response = await test(destination.id);
    expect(response.body).to.deep.include({ success: false, statusCode: null });
    expect(response.body.latency).to.be.at.least(990);
    expect(response.body.message).to.include('1000 ms');
    expect(response.body.error).to.be.a('string').and.not.equal('');
  });

  it('shows at most the first 1 KB of the answer', async () => {
    sink.setBehaviour([respond(200, { body: `${'a'.repeat(1000)}${'b'.repeat(3000)}` })]);
    const destination = await createDestination(h, { name: 'Talkative', url: `${sink.url}/long` });
    const response = await test(destination.id);
    expect(response.body.responseBody).to.equal(`${'a'.repeat(1000)}${'b'.repeat(24)}`);
  });

  it('answers a failure when nothing listens at the URL, naming the host and not the address it resolved to', async () => {
    const gone = await startHttpSink();
    const url = `http://localhost:${new URL(gone.url).port}/x`;
    await gone.close();
    const destination = await createDestination(h, { name: 'Gone', url });
    const response = await test(destination.id);
    expect(response.body).to.deep.include({ success: false, statusCode: null });
    expect(response.body.error).to.match(/ECONNREFUSED/).and.include('localhost').and.not.match(/127\.0\.0\.1|::1/);
  });

  it('records nothing: no delivery, no statistics', async () => {
    sink.setBehaviour([respond(200)]);
    const destination = await createDestination(h, { name: 'Quiet', url: `${sink.url}/q` });
    await test(destination.id);
    const [row] = await h.relay.store.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM deliveries WHERE destination_id = ?', [destination.id]);
    expect(Number(row!.n)).to.equal(0);
    expect((await h.api('GET', `/api/destinations/${destination.id}/health`)).body).to.deep.include({ totalDeliveries: 0, status: 'unknown' });
  });

  it('answers 400 for a payload that is not an object and for unknown fields', async () => {
    const destination = await createDestination(h, { name: 'Strict', url: `${sink.url}/s` });
    for (const bad of [{ payload: 'text' }, { payload: [1] }, { other: 1 }]) {
      const response = await test(destination.id, bad);
      expect(response.status, JSON.stringify(bad)).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
  });

  it('answers 404 RESOURCE_NOT_FOUND for an unknown destination and for another organization, sending nothing', async () => {
    const destination = await createDestination(h, { name: 'Mine', url: `${sink.url}/mine` });
    const before = sink.requests.length;
    for (const [call, id] of [[h.api, 'dst_unknown'], [h.apiB, destination.id]] as const) {
      const response = await call('POST', `/api/destinations/${id}/test`);
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    }
    expect(sink.requests.length).to.equal(before);
  });
});
