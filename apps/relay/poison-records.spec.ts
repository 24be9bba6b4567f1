import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { OutgoingMessage } from '../../libs/broker/broker.js';
import { partitionFor } from '../../libs/broker/partitioner.js';
import { newId } from '../../libs/ids/ids.js';
import { type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond, type HttpSink } from '../../libs/testing/http-sink.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../libs/testing/otlp-receiver.js';
import { ATTEMPTS_TOPIC, CONFIG_TOPIC, destinationTopic, INGEST_TOPIC, RETRY_TIER_TOPICS } from '../../libs/pipeline/topology.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

/** Keys that land on each partition of a topic with `count` partitions, so a record can be put on every one. */
function keysForEveryPartition(count: number): string[] {
  const keys: string[] = [];
  for (let n = 0; keys.length < count; n += 1) {
    const key = `poison-${n}`;
    if (partitionFor(key, count) === keys.length) keys.push(key);
  }
  return keys;
}

/** Every file under `dir`, WAL and journal files included. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

describeEachBackend('One bad webhook never stalls the pipeline', (target) => {
  const kafka = target.name.includes('Kafka');
  const settleMs = kafka ? 40_000 : 10_000;
  // With tracing exported, to a receiver of its own: poison records must not break the webhooks' traces.
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver?.close());
  const suite = useRelayHarness(target, {}, () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
  let sink: HttpSink;
  let source: { id: string; path: string };
  let destinationId: string;

  before(async function () {
    this.timeout(60_000);
    // The first attempt of an event whose body says "fail-once" is answered 500, so it goes through a retry tier.
    const failedOnce = new Set<string>();
    sink = await suite.sink((request) => {
      const eventId = String(request.headers['x-relay-event-id']);
      if (request.body.includes('fail-once') && !failedOnce.has(eventId)) {
        failedOnce.add(eventId);
        return respond(500);
      }
      return respond(200);
    });
    const api = suite.harness.api;
    const created = await api('POST', '/api/sources', {
      body: { name: 'Shop', slug: 'shop', provider: 'generic', maskFields: ['$.card'], encryptFields: ['$.secret'] },
    });
    expect(created.status, created.text).to.equal(201);
    source = { id: created.body.id, path: new URL(created.body.webhookUrl).pathname };
    const destination = await api('POST', '/api/destinations', {
      body: { name: 'Sink', url: sink.url, retryPolicy: { maxRetries: 3, initialDelay: 500, maxDelay: 1000, backoffMultiplier: 1 } },
    });
    expect(destination.status, destination.text).to.equal(201);
    destinationId = destination.body.id;
    expect((await api('POST', '/api/routes', { body: { sourceId: source.id, destinationId } })).status).to.equal(201);
  });

  async function ingest(body: string | Buffer, contentType: string): Promise<string> {
    const response = await fetch(`${suite.harness.relay.url}${source.path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const answer = (await response.json()) as { eventId: string; status: string };
    expect(response.status, JSON.stringify(answer)).to.equal(200);
    expect(answer.status).to.equal('received');
    return answer.eventId;
  }

  const ingestJson = (value: unknown) => ingest(JSON.stringify(value), 'application/json');

  async function deliveredBody(eventId: string): Promise<Buffer> {
    const request = await waitFor(`delivery of ${eventId}`, async () => sink.requests.find((r) => r.headers['x-relay-event-id'] === eventId), isDefined, settleMs);
    return request.body;
  }

  async function settledEvent(eventId: string, status: string, query = '?includePayload=true') {
    return waitFor(
      `event ${eventId} ${status}`, async () => {
        const event = await suite.harness.api('GET', `/api/events/${eventId}${query}`);
        return event.status === 200 && event.body.status === status ? event.body : undefined;
      }, isDefined, settleMs
    );
  }

  const send = (topic: string, messages: OutgoingMessage[]) => suite.harness.relay.broker.producer().send(topic, messages);

  async function deadLetters(reason: string): Promise<number> {
    const metrics = await (await fetch(`${suite.harness.relay.metricsUrl}/metrics`)).text();
    return sampleSum(metrics, 'relay_dead_letters_total', { reason });
  }

  it('stores and delivers a form body with a field named constructor, masking its fields in views', async function () {
    this.timeout(settleMs + 10_000);
    const body = 'constructor=1&card=4111111111111111&order=7';
    const eventId = await ingest(body, 'application/x-www-form-urlencoded');
    expect((await deliveredBody(eventId)).toString()).to.equal(body);
    const event = await settledEvent(eventId, 'delivered');
    expect(event.payload).to.deep.equal({ constructor: '1', card: '****', order: '7' });
  });

  it('stores byte-exact and delivers a JSON body nested 3,000 deep, and masks it as a whole in every view', async function () {
    this.timeout(settleMs + 10_000);
    const body = '{"a":'.repeat(3000) + '1' + '}'.repeat(3000);
    const eventId = await ingest(body, 'application/json');
    expect((await deliveredBody(eventId)).toString()).to.equal(body);
    expect((await settledEvent(eventId, 'delivered')).payload).to.equal('****');
    const payload = await suite.harness.api('GET', `/api/events/${eventId}/payload`);
    expect(payload.status).to.equal(200);
    expect(payload.body).to.equal('****');
  });

  it('keeps routing past a maskFields path that was stored before paths were checked, masking the whole body', async function () {
    this.timeout(settleMs + 10_000);
    const sql = suite.harness.relay.store.sql;
    await sql.run('UPDATE sources SET mask_fields = ? WHERE id = ?', [JSON.stringify(['$[?(']), source.id]);
    try {
      const eventId = await ingestJson({ card: '4111111111111111', order: 8 });
      expect(JSON.parse((await deliveredBody(eventId)).toString())).to.deep.equal({ card: '4111111111111111', order: 8 });
      expect((await settledEvent(eventId, 'delivered')).payload).to.equal('****');
    } finally {
      await sql.run('UPDATE sources SET mask_fields = ? WHERE id = ?', [JSON.stringify(['$.card']), source.id]);
    }
  });

  it('sets aside poison records in every consumer and delivers the next events on the same partitions within seconds', async function () {
    this.timeout(settleMs * 2 + 20_000);
    const malformedBefore = await deadLetters('malformed_record');
    const job = (fields: Record<string, unknown>) => JSON.stringify({
      deliveryId: newId('dlv'), eventId: newId('evt'), orgId: 'org_x', sourceId: source.id, destinationId, attemptNumber: 2, dueAt: 0,
      contentType: 'application/json', providerHeaders: {}, signatureValid: true, receivedAt: Date.now(), ...fields,
    });
    const value = Buffer.from('{}');
    // The router: no metadata, metadata that is not JSON, metadata of the wrong shape; all on the source's partition.
    const ingestPoison: OutgoingMessage[] = [
      { key: source.id, value },
      { key: source.id, value, headers: { 'relay-meta': '{not json' } },
      { key: source.id, value, headers: { 'relay-meta': JSON.stringify({ eventId: 7, headers: null }) } },
    ];
    // The deliverer: a job whose provider headers are null and one without a job.
    const destinationPoison: OutgoingMessage[] = [
      { key: source.id, value, headers: { 'relay-job': job({ providerHeaders: null }) } },
      { key: source.id, value },
    ];
    // Retry tiers: a job whose due time is not a number, on every partition of every tier.
    const retryPoison = keysForEveryPartition(4).map((key) => ({ key, value, headers: { 'relay-job': job({ dueAt: 'soon' }) } }));
    // The recorder: an attempt of the wrong shape on every partition of relay.attempts.
    const attemptPoison = keysForEveryPartition(8).map((key) => ({ key, value: Buffer.from(JSON.stringify({ attemptId: 1, eventId: key })) }));
    await send(INGEST_TOPIC, ingestPoison);
    await send(destinationTopic(destinationId), destinationPoison);
    for (const topic of RETRY_TIER_TOPICS) await send(topic, retryPoison);
    await send(ATTEMPTS_TOPIC, attemptPoison);
    await send(CONFIG_TOPIC, [{ key: 'org', value: Buffer.from('not a change') }]);

    const plain = await ingestJson({ order: 9 });
    const retried = await ingestJson({ order: 10, note: 'fail-once' });
    await settledEvent(plain, 'delivered');
    await settledEvent(retried, 'delivered');
    const expected = ingestPoison.length + destinationPoison.length + retryPoison.length * RETRY_TIER_TOPICS.length + attemptPoison.length + 1;
    await waitFor(`${expected} dead letters`, async () => ((await deadLetters('malformed_record')) - malformedBefore >= expected ? true : undefined), isDefined, settleMs);
    // Each good webhook's trace went through every hop past the poison records, the retry's wait included.
    await waitFor('both traces exported', () => [stagesOf(plain), stagesOf(retried)], ([plainStages, retriedStages]) =>
      ['ingest', 'route', 'attempt', 'record attempt'].every((stage) => plainStages!.includes(stage)) && retriedStages!.includes('retry wait') && retriedStages!.includes('record attempt'), settleMs);
  });

  /** The names of the exported spans of the trace whose ingest span names `eventId`. */
  function stagesOf(eventId: string): string[] {
    const spans = receiver.spans();
    const traceId = spans.find((span) => span.name === 'ingest' && span.attributes['relay.event_id'] === eventId)?.traceId;
    return traceId === undefined ? [] : spans.filter((span) => span.traceId === traceId).map((span) => span.name);
  }

  it('stores an event whose sealed body cannot be opened as failed, with the reason in the API, and goes on', async function () {
    this.timeout(settleMs * 2 + 10_000);
    const [orgRow] = await suite.harness.relay.store.sql.all<{ org_id: string }>('SELECT org_id FROM sources WHERE id = ?', [source.id]);
    const now = Date.now();
    const meta: IngestMeta = {
      eventId: newId('evt'), orgId: orgRow!.org_id, sourceId: source.id, headers: { 'content-type': 'application/json' }, contentType: 'application/json',
      clientIp: '127.0.0.1', payloadHash: 'sha256:x', payloadSize: 9, signatureValid: true, receivedAt: now, validatedAt: now, queuedAt: now, sealed: true,
    };
    await send(INGEST_TOPIC, [{ key: source.id, value: Buffer.from('v1:not:a:sealed:body'), headers: { 'relay-meta': JSON.stringify(meta) } }]);
    const failed = await settledEvent(meta.eventId, 'failed', '');
    expect(failed.failureReason).to.be.a('string').and.include('DecryptionError');
    expect(failed.deliveriesCount).to.equal(0);
    for (const path of [`/api/events/${meta.eventId}?includePayload=true`, `/api/events/${meta.eventId}/payload`]) {
      const read = await suite.harness.api('GET', path);
      expect(read.status, path).to.equal(409);
      expect(read.body.code).to.equal('PAYLOAD_UNREADABLE');
    }
    await settledEvent(await ingestJson({ order: 11 }), 'delivered');
  });

  /** A delivered event with one more delivery, pending, to the same destination: what a poison job or attempt then names. */
  async function pendingDelivery(order: number): Promise<{ eventId: string; orgId: string; deliveryId: string }> {
    const eventId = await ingestJson({ order });
    await settledEvent(eventId, 'delivered');
    const sql = suite.harness.relay.store.sql;
    const [event] = await sql.all<{ org_id: string }>('SELECT org_id FROM events WHERE id = ?', [eventId]);
    const deliveryId = newId('dlv');
    const now = Date.now();
    await sql.run(
      `INSERT INTO deliveries (id, org_id, event_id, destination_id, destination_name, status, attempt_count, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'Sink', 'pending', 0, ?, ?)`,
      [deliveryId, event!.org_id, eventId, destinationId, now, now],
    );
    return { eventId, orgId: event!.org_id, deliveryId };
  }

  it('fails the delivery of a job whose sealed body cannot be opened, with the reason in the API, and goes on', async function () {
    this.timeout(settleMs * 2 + 10_000);
    // A job for a pending delivery whose body was sealed under another key.
    const { eventId, orgId, deliveryId } = await pendingDelivery(13);
    const now = Date.now();
    const job = {
      deliveryId, eventId, orgId, sourceId: source.id, destinationId, attemptNumber: 1, dueAt: 0,
      contentType: 'application/json', providerHeaders: {}, signatureValid: true, receivedAt: now, sealed: true,
    };
    await send(destinationTopic(destinationId), [{ key: source.id, value: Buffer.from('v1:not:a:sealed:body'), headers: { 'relay-job': JSON.stringify(job) } }]);
    const failedDelivery = await waitFor(
      'the poisoned delivery failed',
      async () => {
        const deliveries = await suite.harness.api('GET', `/api/events/${eventId}/deliveries`);
        return deliveries.body.data.find((d: { id: string; status: string }) => d.id === deliveryId && d.status === 'failed');
      },
      isDefined,
      settleMs,
    );
    expect(failedDelivery.error).to.include('DecryptionError');
    // The newer delivery to the destination is the one that counts for the event's status.
    expect((await settledEvent(eventId, 'failed', '')).deliveriesFailed).to.equal(1);
    await settledEvent(await ingestJson({ order: 14 }), 'delivered');
  });

  it('settles the event of an attempt the store refuses to write, and records the attempts after it', async function () {
    this.timeout(settleMs * 2 + 10_000);
    const { eventId, orgId, deliveryId } = await pendingDelivery(15);
    const now = Date.now();
    // PostgreSQL text cannot hold NUL: there the write fails on its own (a poison record) and the recorder
    // fails the delivery itself; SQLite stores it as any failed attempt. Either way the event settles.
    const attempt = {
      attemptId: newId('att'), deliveryId, eventId, orgId, destinationId, attemptNumber: 1, startedAt: now, completedAt: now, ok: false,
      statusCode: 500, latencyMs: 3, error: 'HTTP 500', errorKind: 'http_status', responseBody: 'a\u0000b', deliveryStatus: 'failed', nextAttemptAt: null,
    };
    await send(ATTEMPTS_TOPIC, [{ key: eventId, value: Buffer.from(JSON.stringify(attempt)) }]);
    const settled = await settledEvent(eventId, 'failed', '');
    if (kafka) expect(settled.failureReason).to.be.a('string').and.include('could not be recorded');
    await settledEvent(await ingestJson({ order: 16 }), 'delivered');
  });

  it('never writes the plaintext of an encrypted field into the data directory, while delivering it', async function () {
    this.timeout(settleMs + 10_000);
    const marker = `marker-${newId('evt')}`;
    const eventId = await ingestJson({ secret: marker, order: 12 });
    expect((await deliveredBody(eventId)).toString()).to.include(marker);
    await settledEvent(eventId, 'delivered');
    const dataDir = suite.harness.env.RELAY_DATA_DIR!;
    const holding = filesUnder(dataDir).filter((file) => fs.readFileSync(file).includes(marker));
    expect(holding).to.deep.equal([]);
    const rows = await suite.harness.relay.store.sql.all<{ payload: Buffer | string; payload_text: string | null }>('SELECT payload, payload_text FROM events WHERE id = ?', [eventId]);
    expect(String(rows[0]!.payload)).not.to.include(marker);
    expect(rows[0]!.payload_text ?? '').not.to.include(marker);
  });
});
