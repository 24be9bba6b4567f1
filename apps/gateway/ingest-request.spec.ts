import { createRelayTracer } from '../../libs/tracing/relay-tracer.js';
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Broker, OutgoingMessage } from '../../libs/broker/broker.js';
import { createBroker } from '../../libs/broker/create-broker.js';
import { isRelayError, RelayError } from '../../libs/errors/errors.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { createDedupLedger } from '../../libs/store/dedup-ledger.js';
import { hundredthLeases, leasedRateLimits } from './source-rate-limits.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { openStoreFixture, type StoreFixture } from '../../libs/testing/store-fixtures.js';
import { apiClient, type ApiCall } from '../../testing/api-client.js';
import { sealedPayload } from '../../libs/payload/stored-payload.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import type { IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { ingestDeadline } from './ingest-deadline.js';
import { ingestRequest, type IngestDeps } from './ingest-request.js';
import { createSourceResolver } from './source-resolver.js';

describeEachStore('ingestRequest', (target) => {
  let fixture: StoreFixture;
  let brokerDir: string;
  let broker: Broker;
  let server: http.Server;
  let call: ApiCall;
  const published: OutgoingMessage[] = [];
  /** The wait budget of each request (the default unless a case shortens it). */
  let budgetMs: number | undefined;
  /** While set, each publish waits for it before reaching the broker: a broker slow to acknowledge. */
  let publishHeld: Promise<void> | undefined;
  /** The last send to the broker, as it settles. */
  let lastSend: Promise<void> | undefined;

  before(async function () {
    fixture = await openStoreFixture(this, target);
    brokerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingest-broker-'));
    broker = await createBroker({ dataDir: brokerDir });
    const store = fixture.store;
    const secrets = createSecretBox(Buffer.alloc(32, 1));
    const deps: IngestDeps = {
      resolveSource: createSourceResolver({
        lookup: { organizationBySlug: (slug) => store.organizations.bySlug(slug), sourceBySlug: (orgId, slug) => store.sources.findOneBy(orgId, { slug }) },
        secrets,
      }).get,
      dedup: createDedupLedger(store.sql),
      rateLimits: leasedRateLimits(createRateWindows(store.sql), hundredthLeases),
      // Whatever broker is current: the test closes one and opens another on the same log.
      publish: (topic, message) => {
        published.push(message);
        const held = publishHeld;
        lastSend = held ? held.then(() => broker.producer().send(topic, [message])) : broker.producer().send(topic, [message]);
        return lastSend;
      },
      seal: (body) => sealedPayload(body, secrets).bytes,
      now: Date.now,
      tracer: createRelayTracer({ serviceName: 'ingest-request-spec', sampleRatio: 1 }),
    };
    server = http.createServer((request, response) => {
      const [, , org, source] = request.url!.split('/');
      const url = new URL(request.url!, 'https://relay.test');
      const called = { path: url.pathname, querystring: url.search.slice(1) };
      ingestRequest(deps, { orgSlug: org!, sourceSlug: source!, request, clientIp: '127.0.0.1', publicUrl: url.href, ...called, deadline: ingestDeadline(budgetMs) }).then(
        (result) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result)),
        (error) => {
          // The error envelope, as the gateway's error path writes it (answers are checked against the OpenAPI document).
          const relayError = isRelayError(error) ? error : new RelayError(500, 'INTERNAL_ERROR', 'unexpected');
          const body = { error: relayError.title, message: relayError.message, code: relayError.code };
          response.writeHead(relayError.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    call = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, null);
  });

  after(async () => {
    server?.close();
    await broker?.close();
    if (brokerDir) fs.rmSync(brokerDir, { recursive: true, force: true });
    await fixture?.close();
  });

  it('when the broker fails, answers 503 without accepting, and frees the dedup keys: the provider retry is a new event, not a duplicate', async () => {
    const { slug } = await fixture.createSource();
    const path = `/ingest/${fixture.org.slug}/${slug}`;
    const webhook = { rawBody: JSON.stringify({ order: 42 }), headers: { 'content-type': 'application/json' } };

    await broker.close();
    const refused = await call('POST', path, webhook);
    expect(refused.status, refused.text).to.equal(503);
    expect(refused.body.code).to.equal('BROKER_UNAVAILABLE');

    broker = await createBroker({ dataDir: brokerDir });
    const retried = await call('POST', path, webhook);
    expect(retried.status, retried.text).to.equal(200);
    expect(retried.body.status).to.equal('received');
    const again = await call('POST', path, webhook);
    expect(again.body).to.deep.equal({ eventId: retried.body.eventId, status: 'duplicate' });
  });

  it('when the append times out, keeps the dedup keys: the provider retry is answered duplicate of that event, and its copy published under its id', async () => {
    const { slug } = await fixture.createSource();
    const path = `/ingest/${fixture.org.slug}/${slug}`;
    const webhook = { rawBody: JSON.stringify({ order: 43 }), headers: { 'content-type': 'application/json' } };
    let acknowledge!: () => void;
    publishHeld = new Promise((resolve) => (acknowledge = resolve));
    budgetMs = 50;
    let refused;
    try {
      refused = await call('POST', path, webhook);
    } finally {
      publishHeld = undefined;
      budgetMs = undefined;
    }
    expect(refused.status, refused.text).to.equal(503);
    expect(refused.body.code).to.equal('BROKER_UNAVAILABLE');
    const firstEventId = (JSON.parse(published.at(-1)!.headers!['relay-meta']!) as IngestMeta).eventId;

    // The append the answer gave up on lands after all.
    acknowledge();
    await lastSend;
    const retried = await call('POST', path, webhook);
    expect(retried.body).to.deep.equal({ eventId: firstEventId, status: 'duplicate' });
    const copy = JSON.parse(published.at(-1)!.headers!['relay-meta']!) as IngestMeta;
    expect(copy).to.include({ eventId: firstEventId, duplicate: true });
  });

  it("publishes the source's slug with the event, so that deliveries name the source without looking it up", async () => {
    const { slug } = await fixture.createSource();
    const received = await call('POST', `/ingest/${fixture.org.slug}/${slug}`, { rawBody: '{}', headers: { 'content-type': 'application/json' } });
    expect(received.status, received.text).to.equal(200);
    const metas = published.map((message) => JSON.parse(message.headers!['relay-meta']!) as IngestMeta);
    expect(metas.find((meta) => meta.eventId === received.body.eventId)).to.include({ sourceSlug: slug });
  });

  it("continues the sender's traceparent in the published record, and starts a real trace without one", async () => {
    const { slug } = await fixture.createSource();
    const traceOf = (eventId: string) => {
      const message = published.find((candidate) => (JSON.parse(candidate.headers!['relay-meta']!) as IngestMeta).eventId === eventId);
      return message?.headers?.traceparent?.split('-');
    };
    const senderTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const continued = await call('POST', `/ingest/${fixture.org.slug}/${slug}`, { rawBody: '{"a":1}', headers: { 'content-type': 'application/json', traceparent: `00-${senderTrace}-00f067aa0ba902b7-01` } });
    expect(continued.status, continued.text).to.equal(200);
    const [, traceId, parentId] = traceOf(continued.body.eventId)!;
    expect(traceId).to.equal(senderTrace);
    expect(parentId).to.match(/^[0-9a-f]{16}$/).and.not.equal('00f067aa0ba902b7');

    const started = await call('POST', `/ingest/${fixture.org.slug}/${slug}`, { rawBody: '{"a":2}', headers: { 'content-type': 'application/json', traceparent: 'not-a-traceparent' } });
    const [version, newTrace, newParent] = traceOf(started.body.eventId)!;
    expect(version).to.equal('00');
    expect(newTrace).to.match(/^[0-9a-f]{32}$/).and.not.match(/^0+$/).and.not.equal(senderTrace);
    expect(newParent).to.match(/^[0-9a-f]{16}$/).and.not.match(/^0+$/);
  });
});
