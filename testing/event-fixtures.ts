import { createRelayTracer } from '../libs/tracing/relay-tracer.js';
import type { BrokerRecord, OutgoingMessage } from '../libs/broker/broker.js';
import { payloadHash } from '../libs/dedup/payload-hash.js';
import { newId } from '../libs/ids/ids.js';
import type { AttemptRecord } from '../libs/pipeline/attempt-record.js';
import { decodeDeliveryJob, type DeliveryJob } from '../libs/pipeline/delivery-job.js';
import { encodeIngestMessage, type IngestMeta } from '../libs/pipeline/ingest-message.js';
import { recordAttempts } from '../libs/ledger/attempts.js';
import { routeEvents } from '../apps/router/route-events.js';
import type { RouteTarget } from '../libs/routing/route-targets.js';
import { created, type ApiHarness } from './api-harness.js';
import { destinationTopic, LANES_TOPIC, INGEST_TOPIC } from '../libs/pipeline/topology.js';
import { isDefined, waitFor } from '../libs/testing/wait-for.js';

/**
 * Test support: events stored by the router's own code (`routeEvents` over a `relay.ingest` record) at
 * chosen instants, and attempts written by the recorder's own code (`recordAttempts`). Events made this
 * way publish no job to any running deliverer, so their deliveries change only as a test records.
 */

export interface EventSeed {
  orgId: string;
  sourceId: string;
  body?: string | Buffer;
  contentType?: string | null;
  headers?: Record<string, string>;
  /** Default now; validated 2 ms later, queued 3 ms later, stored (createdAt) 5 ms later. */
  receivedAt?: number;
  signatureValid?: boolean;
  /** One pending delivery per target. */
  targets?: RouteTarget[];
}

export interface SeededDelivery {
  id: string;
  destinationId: string;
}

export interface SeededEvent {
  eventId: string;
  orgId: string;
  receivedAt: number;
  deliveries: SeededDelivery[];
  /** The delivery jobs routing published, by topic. */
  jobs: { topic: string; message: OutgoingMessage }[];
}

export async function seedEvent(h: ApiHarness, seed: EventSeed): Promise<SeededEvent> {
  const body = Buffer.from(seed.body ?? '{"type":"order.created","order":{"id":"ord_1"}}');
  const receivedAt = seed.receivedAt ?? Date.now();
  const contentType = seed.contentType === undefined ? 'application/json' : seed.contentType;
  const meta: IngestMeta = {
    eventId: newId('evt'),
    orgId: seed.orgId,
    sourceId: seed.sourceId,
    headers: { ...(contentType ? { 'content-type': contentType } : {}), ...seed.headers },
    contentType,
    clientIp: '127.0.0.1',
    payloadHash: payloadHash(body),
    payloadSize: body.length,
    signatureValid: seed.signatureValid ?? true,
    receivedAt,
    validatedAt: receivedAt + 2,
    queuedAt: receivedAt + 3,
  };
  const message = encodeIngestMessage(meta, body);
  const record: BrokerRecord = { topic: INGEST_TOPIC, partition: 0, offset: '0', timestamp: receivedAt, key: message.key, value: message.value, headers: message.headers ?? {} };
  const jobs: SeededEvent['jobs'] = [];
  await routeEvents(
    {
      sql: h.relay.store.sql,
      // Routes without filters, one per target, to destinations made long ago: their jobs go to their own topics.
      routesFor: async () => (seed.targets ?? []).map((target) => ({ ...target, routeId: `rte_${target.destinationId}`, filter: null, destinationOrdered: false, transformation: null, delaySeconds: 0 })),
      publish: async (topic, messages) => void jobs.push(...messages.map((m) => ({ topic, message: m }))),
      now: () => receivedAt + 5,
      tracer: createRelayTracer({ serviceName: 'event-fixtures', sampleRatio: 1 }),
      secrets: h.secrets,
      // A seed is a well-formed record: one the router sets aside would be a broken fixture.
      deadLetters: async (reason) => {
        throw new Error(`The seeded event was dead-lettered (${reason})`);
      },
    },
    { topic: INGEST_TOPIC, partition: 0, records: [record] },
  );
  const deliveries = await h.relay.store.sql.all<SeededDelivery>(
    'SELECT id, destination_id AS "destinationId" FROM deliveries WHERE event_id = ? ORDER BY id',
    [meta.eventId],
  );
  return { eventId: meta.eventId, orgId: seed.orgId, receivedAt, deliveries, jobs };
}

/** One try of a delivery: a status code (null for no answer), a latency and when it started. */
export interface Try {
  statusCode: number | null;
  latencyMs: number;
  startedAt: number;
  error?: string;
}

/**
 * Records tries of one delivery as the deliverer reports them: each failed try but the last is
 * `retrying`; the last is `delivered` when it succeeded, else `failed` when `gaveUp`, else `retrying`.
 */
export async function recordTries(h: ApiHarness, event: SeededEvent, delivery: SeededDelivery, tries: Try[], options: { gaveUp?: boolean; firstAttempt?: number } = {}) {
  const first = options.firstAttempt ?? 1;
  const attempts = tries.map((t, index): AttemptRecord => {
    const ok = t.statusCode !== null && t.statusCode >= 200 && t.statusCode < 300;
    const last = index === tries.length - 1;
    return {
      attemptId: newId('att'),
      deliveryId: delivery.id,
      eventId: event.eventId,
      orgId: event.orgId,
      destinationId: delivery.destinationId,
      attemptNumber: first + index,
      startedAt: t.startedAt,
      completedAt: t.startedAt + t.latencyMs,
      ok,
      statusCode: t.statusCode,
      latencyMs: t.latencyMs,
      error: ok ? null : (t.error ?? (t.statusCode === null ? 'timeout' : `HTTP ${t.statusCode}`)),
      errorKind: ok ? null : t.statusCode === null ? 'timeout' : 'http_status',
      responseBody: ok ? 'ok' : 'error',
      deliveryStatus: ok ? 'delivered' : last && options.gaveUp ? 'failed' : 'retrying',
      nextAttemptAt: ok || (last && options.gaveUp) ? null : t.startedAt + t.latencyMs + 1000,
    };
  });
  await recordAttempts(h.relay.store.sql, attempts);
  return attempts;
}

export async function orgIds(h: ApiHarness): Promise<{ a: string; b: string }> {
  const b = await h.relay.store.organizations.bySlug('org-b');
  return { a: h.relay.bootstrap.org.id, b: b!.id };
}

export function createSource(h: ApiHarness, body: Record<string, unknown>, api = h.api): Promise<{ id: string; slug: string; name: string }> {
  return created(api, '/api/sources', body);
}

export function createDestination(h: ApiHarness, body: Record<string, unknown>, api = h.api): Promise<{ id: string; name: string }> {
  return created(api, '/api/destinations', body);
}

export async function createRoute(h: ApiHarness, sourceId: string, destinationId: string, api = h.api): Promise<void> {
  await created(api, '/api/routes', { sourceId, destinationId });
}

/**
 * Reads a destination's jobs from the start, in a consumer group of its own, as a deliverer would: its own
 * topic, and the lanes, where a destination's jobs go on Kafka.
 */
export async function watchDestinationTopic(h: ApiHarness, destinationId: string) {
  const jobs: ReturnType<typeof decodeDeliveryJob>[] = [];
  const consumer = h.relay.broker.consumer({
    groupId: `test-watch-${newId('key')}`,
    topics: [destinationTopic(destinationId), LANES_TOPIC],
    fromBeginning: true,
    handleBatch: async (batch) =>
      void jobs.push(...batch.records.map(decodeDeliveryJob).filter((decoded) => decoded.job.destinationId === destinationId)),
  });
  await consumer.start();
  return {
    jobs,
    /** The first job that matches, once it has arrived. */
    waitForJob(matches: (job: DeliveryJob) => boolean, timeoutMs = 5000) {
      const what = `a matching job for ${destinationId} on ${destinationTopic(destinationId)} or ${LANES_TOPIC}`;
      return waitFor(what, () => jobs.find((j) => matches(j.job)), isDefined, timeoutMs, 20);
    },
    jobFor(deliveryId: string) {
      return this.waitForJob((job) => job.deliveryId === deliveryId);
    },
    stop: () => consumer.stop(),
  };
}
