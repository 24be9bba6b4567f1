import { expect } from 'chai';
import { newId } from '../../libs/ids/ids.js';
import { DESTINATION_TYPES } from '../../libs/destinations/queue-target.js';
import { encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';
import { startDelivererHarness, type DelivererHarness } from '../../testing/deliverer-harness.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { rabbitmqVhost, targetKit, type Outage, type TargetKit } from '../../testing/queue-target-kits.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import { latencyBucket } from '../../libs/stats/latency-buckets.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { apiClient } from '../../testing/api-client.js';
import { created, createdId, startApiHarness, type ApiHarness } from '../../testing/api-harness.js';
import type { DestinationSettings } from '../../testing/deliverer-harness.js';

const QUICK_RETRIES = { maxRetries: 2, initialDelay: 100, maxDelay: 200, backoffMultiplier: 1 };
const BREAKER = { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 300 };

/** A kit's destination as the API creates it: `url` for HTTP, `type` and `target` for a queue. */
const apiDestination = ({ queue, url }: DestinationSettings) => (queue ? { type: queue.type, target: queue.target } : { url });

/** Nearest-rank percentile of the exact values. */
function truePercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
}

/**
 * One delivery contract for every destination type, against the real servers of this machine (RabbitMQ,
 * NATS JetStream, Redis; Kafka from libs/testing/kafka-target.ts, and for the outage a one-broker cluster
 * of the test's own; HTTP a sink): each test has its own exchange and queue (in the suite's vhost),
 * stream, subject, key or topic, and removes it.
 */
for (const type of DESTINATION_TYPES) {
  describe(`delivery contract: ${type}`, function () {
    this.timeout(60_000);
    let vhost: ReturnType<typeof rabbitmqVhost> | undefined;
    let h: DelivererHarness | undefined;
    let kit: TargetKit | undefined;
    let outage: Outage | undefined;
    let timers: ManualTimers | undefined;

    before(function () {
      if (type === 'rabbitmq') vhost = rabbitmqVhost();
    });
    after(function () {
      vhost?.remove();
    });
    beforeEach(async function () {
      kit = await targetKit(type, { mocha: this, vhost: vhost?.vhost });
    });
    afterEach(async function () {
      await h?.close();
      await outage?.close();
      await kit?.cleanup();
      h = kit = outage = timers = undefined;
    });

    const start = (options: Parameters<typeof startDelivererHarness>[0] = {}) => startDelivererHarness({ breakerOptions: BREAKER, ...options });

    it('delivers once on acknowledgement, with the body as sent and the headers as message headers', async function () {
      h = await start();
      const destination = await h.addDestination({ ...kit!.destination(), headers: { 'X-Team': 'payments' } });
      const body = JSON.stringify({ transformed: true, order: 42 });
      const job = await h.publishJob(destination.id, Buffer.from(body));
      const [attempt] = await h.attemptsOf(job.deliveryId, 1, 20_000);
      expect(attempt, attempt?.error ?? '').to.include({ ok: true, deliveryStatus: 'delivered' });
      const [message, ...more] = await waitFor('the message', () => kit!.received(), (all) => all.length >= 1);
      expect(more).to.deep.equal([]);
      expect(message!.body).to.equal(body);
      expect(message!.headers).to.include({ 'x-team': 'payments', 'x-relay-event-id': job.eventId, 'x-relay-delivery-id': job.deliveryId, 'x-relay-attempt': '1', 'content-type': 'application/json' });
      expect(message!.headers['webhook-signature']).to.match(/^v1,/);
      expect(message!.headers.traceparent).to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    });

    it('records a refused publish as a failed attempt and retries it by the policy', async function () {
      const refusing = kit!.refusing();
      if (!refusing) {
        console.log('      skipped: the Kafka mock creates every topic it is sent to, so it refuses nothing (run with a real cluster)');
        this.skip();
      }
      h = await start();
      const destination = await h.addDestination({ ...refusing, retryPolicy: QUICK_RETRIES });
      const job = await h.publishJob(destination.id, Buffer.from('{}'));
      const attempts = await h.attemptsOf(job.deliveryId, 3, 30_000);
      expect(attempts.map((attempt) => attempt.deliveryStatus)).to.deep.equal(['retrying', 'retrying', 'failed']);
      for (const attempt of attempts) {
        expect(attempt.ok).to.equal(false);
        expect(attempt.errorKind).to.equal(type === 'http' ? 'http_status' : 'rejected');
        expect(attempt.error ?? attempt.statusCode).to.not.equal(null);
      }
    });

    it('records a server lost during delivery as failed attempts, opens the circuit, and delivers what waited once it is back', async function () {
      // On Kafka the outage starts a JVM broker of its own first (10-60 s on a shared machine).
      this.timeout(150_000);
      const made = await kit!.outage();
      if (typeof made === 'string') {
        console.log(`      skipped: ${made}`);
        this.skip();
      }
      outage = made;
      h = await start();
      const destination = await h.addDestination({ ...outage.destination, timeoutMs: 5000, retryPolicy: { ...QUICK_RETRIES, maxRetries: 20 } });
      const sent = (n: number) => h!.publishJob(destination.id, Buffer.from(JSON.stringify({ n })), { sourceId: newId('src') });
      // Delivered first, so the connection the next attempts would reuse is the one that is lost.
      const [before] = await h.attemptsOf((await sent(0)).deliveryId, 1, 20_000);
      expect(before, before?.error ?? '').to.include({ ok: true });
      await outage.goDown();
      const jobs = [await sent(1), await sent(2), await sent(3)];
      const [first] = await h.attemptsOf(jobs[0]!.deliveryId, 1, 20_000);
      expect(first).to.include({ ok: false, deliveryStatus: 'retrying' });
      expect(['connect', 'reset', 'timeout']).to.include(first!.errorKind);
      // A queue sender's connection error says what failed, never where (HTTP names the URL it was given).
      if (type !== 'http') expect(first!.error).to.not.match(/127\.0\.0\.1/);
      await waitFor('the circuit open', () => h!.deliverer.circuitState(destination.id), (state) => state === 'open', 60_000);
      await outage.comeUp();
      await waitFor('the circuit closed', () => h!.deliverer.circuitState(destination.id), (state) => state === 'closed', 30_000);
      // Nothing lost: every job is delivered once the server is back.
      for (const job of jobs) await waitFor(`${job.deliveryId} delivered`, () => h!.attempts.items.some((attempt) => attempt.deliveryId === job.deliveryId && attempt.ok), isTrue, 30_000);
      const received = await waitFor('every message', () => kit!.received(), (all) => all.length >= 4, 30_000);
      expect([...new Set(received.map((message) => (JSON.parse(message.body) as { n: number }).n))].sort()).to.deep.equal([0, 1, 2, 3]);
    });

    it('delivers the jobs of one source in order to an ordered destination', async function () {
      h = await start();
      const destination = await h.addDestination({ ...kit!.destination(), ordering: 'source' });
      await h.deliverer.refresh({ kind: 'destination', action: 'created', orgId: h.orgId, id: destination.id });
      const jobs = Array.from({ length: 8 }, () => h!.jobFor(destination.id));
      await h.broker.producer().send(destinationTopic(destination.id), jobs.map((job, n) => encodeDeliveryJob(job, Buffer.from(JSON.stringify({ n })))));
      const received = await waitFor('every job delivered', () => kit!.received(), (all) => all.length >= jobs.length, 30_000);
      expect(received.map((message) => (JSON.parse(message.body) as { n: number }).n)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    });

    it('spaces deliveries to the rate limit by pausing the destination, using up no retry', async function () {
      timers = new ManualTimers(Date.now());
      h = await start({ now: timers.now, schedule: timers.schedule });
      const destination = await h.addDestination({ ...kit!.destination(), rateLimitPerMinute: 600 });
      const topic = destinationTopic(destination.id);
      await h.broker.producer().send(topic, Array.from({ length: 12 }, () => encodeDeliveryJob(h!.jobFor(destination.id), Buffer.from('{}'))));
      // A burst of 10 (one second's worth); the 11th finds the budget spent and pauses the topic.
      await waitFor('the burst delivered', () => h!.attempts.items.length, (count) => count >= 10, 20_000);
      await waitFor('the topic paused', () => h!.paused(topic), isTrue, 20_000, 5);
      expect(h.attempts.items).to.have.length(10);
      timers.advance(1000);
      await waitFor('the rest delivered', () => h!.attempts.items.length, (count) => count >= 12, 20_000);
      expect(h.attempts.items.every((attempt) => attempt.ok && attempt.attemptNumber === 1)).to.equal(true);
      expect(await waitFor('every message', () => kit!.received(), (all) => all.length >= 12, 20_000)).to.have.length(12);
    });
    /** The cases that need the whole pipeline (gateway, router, deliverer, recorder, API) on SQLite and the embedded log. */
    describe('through the whole relay', function () {
      let relay: ApiHarness | undefined;
      let routed = 0;
      before(async function () {
        relay = await startApiHarness(this, STORE_TARGETS[0]!, { role: 'all' });
      });
      after(async function () {
        await relay?.stop();
      });

      /** A source routed (through a transformation when `code` is given) to a destination on the test's kit. */
      async function routedSource(code?: string) {
        routed += 1;
        const source = await created(relay!.api, '/api/sources', { name: `Contract ${routed}`, slug: `contract-${type}-${routed}` });
        const destinationId = await createdId(relay!.api, '/api/destinations', { name: `Contract ${type} ${routed}`, ...apiDestination(kit!.destination()), headers: { 'X-Team': 'payments' } });
        const transformationId = code ? await createdId(relay!.api, '/api/transformations', { name: `Contract ${type} ${routed}`, code }) : undefined;
        await created(relay!.api, '/api/routes', { sourceId: source.id, destinationId, transformationId });
        return { slug: source.slug as string, destinationId };
      }

      async function ingest(slug: string, body: string): Promise<string> {
        const answer = await apiClient(relay!.url, null)('POST', `/ingest/org-a/${slug}`, { rawBody: body, headers: { 'content-type': 'application/json' } });
        expect(answer.status, answer.text).to.equal(200);
        return answer.body.eventId as string;
      }

      it('sends the result of the route\'s transformation as the body, with the trace and the relay\'s and the destination\'s headers', async function () {
        const { slug } = await routedSource('function transform(r) { return { ...r, body: { kind: r.body.type, relayed: true } }; }');
        const eventId = await ingest(slug, '{"type":"order.created","secret":"left out"}');
        const [message] = await waitFor('the transformed message', () => kit!.received(), (all) => all.length >= 1, 20_000);
        expect(JSON.parse(message!.body)).to.deep.equal({ kind: 'order.created', relayed: true });
        expect(message!.headers).to.include({ 'x-team': 'payments', 'x-relay-event-id': eventId, 'content-type': 'application/json' });
        expect(message!.headers['x-relay-delivery-id']).to.match(/^dlv_/);
        expect(message!.headers.traceparent).to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
      });

      it('delivers a replayed event to the target again, as a delivery of its own', async function () {
        const { slug } = await routedSource();
        const body = '{"type":"invoice.paid","amount":12}';
        const eventId = await ingest(slug, body);
        await waitFor('the first delivery', () => kit!.received(), (all) => all.length >= 1, 20_000);
        const replay = await relay!.api('POST', `/api/events/${eventId}/replay`);
        expect(replay.status, replay.text).to.equal(202);
        const [first, again, ...more] = await waitFor('the replayed delivery', () => kit!.received(), (all) => all.length >= 2, 20_000);
        expect(more).to.deep.equal([]);
        expect([first!.body, again!.body]).to.deep.equal([body, body]);
        expect(again!.headers['x-relay-event-id']).to.equal(eventId);
        expect(again!.headers['x-relay-delivery-id']).to.not.equal(first!.headers['x-relay-delivery-id']);
      });

      it("shows the attempts' latency percentiles in the destination's health", async function () {
        const { slug, destinationId } = await routedSource();
        const events: string[] = [];
        for (let n = 0; n < 6; n += 1) events.push(await ingest(slug, JSON.stringify({ n })));
        const health = await waitFor('every attempt in the health', async () => (await relay!.api('GET', `/api/destinations/${destinationId}/health`)).body, (body) => body.totalDeliveries >= events.length, 20_000);
        expect(health).to.include({ totalDeliveries: 6, successfulDeliveries: 6, successRate: 100 });
        const latencies: number[] = [];
        for (const eventId of events) {
          const timeline = await waitFor(`${eventId} delivered`, async () => (await relay!.api('GET', `/api/events/${eventId}/timeline`)).body, (body) => body.deliveries?.[0]?.status === 'delivered', 20_000);
          latencies.push(...timeline.deliveries[0].attempts.map((attempt: { latency: number }) => attempt.latency));
        }
        for (const [field, p] of [['p50Latency', 50], ['p95Latency', 95], ['p99Latency', 99]] as const) {
          expect(health[field], field).to.be.a('number');
          expect(Math.abs(latencyBucket(health[field]) - latencyBucket(truePercentile(latencies, p))), field).to.be.at.most(1);
        }
      });
    });
  });
}
