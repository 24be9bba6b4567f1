import type { BrokerRecord, OutgoingMessage, RecordBatch } from '../../libs/broker/broker.js';
import { deadLetterPoison, type DeadLetters } from '../../libs/pipeline/dead-letter.js';
import { firstAttemptJob, withLane } from '../../libs/pipeline/delivery-job.js';
import { firstAttemptMessage } from '../../libs/pipeline/first-attempt.js';
import { decodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { decodedRounds } from '../../libs/pipeline/fair-rounds.js';
import { handleIsolatingPoison, poisonReason } from '../../libs/pipeline/poison-records.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { filterDocument } from '../../libs/filters/filter-document.js';
import { FieldBudget } from '../../libs/payload/field-budget.js';
import { openStoredPayload, sealedPayload, storedPayload, storedSealedPayload } from '../../libs/payload/stored-payload.js';
import type { RoutedTarget } from '../../libs/routing/route-targets.js';
import { planRoutes, type PlannedEvent, type RoutePlan, type TransformationRunner } from '../../libs/transformations/route-transformations.js';
import { livePayloadPolicies, storeEvents, storeFailedEvent, type NewEvent } from '../../libs/ledger/stored-events.js';
import { recordTraceparent, withTraceparent } from '../../libs/tracing/record-trace.js';
import { endFailed, type RelayTracer, type Span } from '../../libs/tracing/relay-tracer.js';

/** What routing needs; the composition root wires the store, the broker and the route cache in. */
export interface RouterDeps {
  sql: SqlClient;
  routesFor(sourceId: string): Promise<RoutedTarget[]>;
  /** Publishes to one topic and resolves once the broker holds the messages durably. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  now(): number;
  /** Seals the payloads of sources with `encryptFields`, and of events whose record could not be handled. */
  secrets: SecretBox;
  deadLetters: DeadLetters;
  /**
   * Jobs of destinations without ordering go through the lanes (Kafka: a topic per destination costs the
   * deliverers a rebalance per new destination and a fetch per idle partition). Off on the embedded log,
   * whose deliverer subscribes to a new topic at once and reads idle ones for nothing.
   */
  lanes?: boolean;
  /** Runs routes' transformations (libs/transformations/route-transformations.ts); absent where no route has one (tests, benches). */
  transformations?: TransformationRunner;
  tracer: RelayTracer;
}

/**
 * The event of a record the router could not handle, when its metadata can be read and its source still
 * exists: stored `failed` with the reason and its body sealed whole, so the sender's `200` is not silently
 * lost and the API tells what happened. An event already stored is marked the same way.
 */
async function markFailedEvent(deps: RouterDeps, record: BrokerRecord, detail: string): Promise<void> {
  const { meta } = decodeIngestMessage(record);
  await deps.sql.transaction(async (tx) => {
    if (!(await livePayloadPolicies(tx, [meta.sourceId])).has(meta.sourceId)) return;
    // Sealed whole (or kept sealed): nothing else about the body can be trusted to work.
    const payload = meta.sealed ? { bytes: record.value, sealed: true, searchText: null } : sealedPayload(record.value, deps.secrets);
    await storeFailedEvent(tx, meta, payload, `The event could not be routed: ${detail}`, deps.now());
  });
}

/** A record's event, with the trace context its gateway span handed on. */
type IngestEvent = ReturnType<typeof decodeIngestMessage> & { traceparent: string | undefined };

function decodeIngestEvent(record: BrokerRecord): IngestEvent {
  return { ...decodeIngestMessage(record), traceparent: recordTraceparent(record) };
}

/**
 * Consumes a batch of `relay.ingest`: persists events and pending deliveries in one transaction, then
 * publishes one job per routed destination, round after round of the organizations' records in turn
 * (fair-rounds.ts), so one organization's many or costly events do not hold up another's. The offsets are
 * committed after the last round, by returning. A record that fails on its own (poison-records.ts) is set
 * aside with its event marked, and the rest go on.
 */
export async function routeEvents(deps: RouterDeps, batch: RecordBatch): Promise<void> {
  const { rounds, decoded } = decodedRounds(batch.records, decodeIngestEvent, (event) => event.meta.orgId);
  for (const round of rounds) {
    await handleIsolatingPoison(round, {
      all: (records) => routeRecords(deps, records.map(decoded)),
      one: (record) => routeRecords(deps, [decoded(record)]),
      deadLetter: (record, error) => deadLetterPoison(deps.deadLetters, record, error),
      markEvent: (record, error) => markFailedEvent(deps, record, poisonReason(error).detail),
    });
  }
}

/** What a route's transformation receives of an event: the document filters see, and its context. */
function routedEvent(deps: RouterDeps, meta: IngestMeta, body: Buffer): PlannedEvent {
  return {
    document: () => filterDocument({ body: openStoredPayload(body, meta.sealed === true, deps.secrets), contentType: meta.contentType, headers: meta.headers, query: meta.query, path: meta.path }),
    contentType: meta.contentType,
    context: { eventId: meta.eventId, sourceId: meta.sourceId, receivedAt: new Date(meta.receivedAt).toISOString() },
  };
}

/** One span per event, over its filters, transformations, storing and fan-out. */
async function routeRecords(deps: RouterDeps, events: IngestEvent[]): Promise<void> {
  const spans = events.map((event) => deps.tracer.start('route', event.traceparent, { attributes: { 'relay.event_id': event.meta.eventId, 'relay.source_id': event.meta.sourceId } }));
  try {
    await routeTraced(deps, events, spans);
  } catch (error) {
    for (const span of spans) endFailed(span, error);
    throw error;
  }
  for (const span of spans) span.end();
}

async function routeTraced(deps: RouterDeps, events: IngestEvent[], spans: Span[]): Promise<void> {
  const targets = await Promise.all(events.map((event) => deps.routesFor(event.meta.sourceId)));
  // One budget an event for its filters, then its search text: the filters decide deliveries, so they go first.
  const budgets = events.map(() => new FieldBudget());
  // Before the transaction, which transformations would otherwise hold open for up to their time limit each.
  const plans = events.map((event, index) => planRoutes(targets[index]!, routedEvent(deps, event.meta, event.body), deps.transformations, budgets[index]!));
  const now = deps.now();
  const routed = await deps.sql.transaction(async (tx) => {
    const stored: ((typeof events)[number] & { plan: RoutePlan; span: Span })[] = [];
    const planned: NewEvent[] = [];
    const live = await livePayloadPolicies(tx, events.map((event) => event.meta.sourceId));
    for (const [index, event] of events.entries()) {
      // A source deleted after ingest took its events with it; there is nothing left to store.
      const policy = live.get(event.meta.sourceId);
      if (!policy) continue;
      const { meta, body } = event;
      const payload = meta.sealed ? storedSealedPayload(body, meta.contentType, policy, deps.secrets, budgets[index]) : storedPayload(body, meta.contentType, policy, deps.secrets, budgets[index]);
      stored.push({ ...event, plan: plans[index]!, span: spans[index]! });
      planned.push({ meta, payload, ...plans[index]!, traceId: spans[index]!.spanContext().traceId });
    }
    const deliveries = await storeEvents(tx, planned, now);
    return stored.map((event, index) => ({ ...event, deliveries: deliveries[index]! }));
  });
  // A redelivered record's deliveries come from the store: a destination no longer routed, whose
  // ordering is not known here, gets its own topic.
  const ordered = new Map(targets.flat().map((target) => [target.destinationId, target.destinationOrdered]));
  const byTopic = new Map<string, OutgoingMessage[]>();
  for (const { meta, body, deliveries, plan, span } of routed) {
    span.setAttributes({ 'relay.deliveries': deliveries.length, 'relay.filtered_routes': plan.filteredRouteIds.length });
    for (const delivery of deliveries) {
      const job = firstAttemptJob({ ...meta, providerHeaders: meta.headers }, delivery);
      const target = plan.targets.find((planned) => planned.destinationId === delivery.destinationId);
      const jobPlan = target && { transformationId: target.report?.id, transformed: target.transformed, delaySeconds: target.delaySeconds };
      const { topic, message } = firstAttemptMessage(withLane(job, deps.lanes === true, ordered.get(delivery.destinationId) ?? true), body, jobPlan, deps.now(), deps.secrets);
      const messages = byTopic.get(topic);
      if (messages) messages.push(withTraceparent(message, span));
      else byTopic.set(topic, [withTraceparent(message, span)]);
    }
  }
  await Promise.all([...byTopic].map(([topic, messages]) => deps.publish(topic, messages)));
}
