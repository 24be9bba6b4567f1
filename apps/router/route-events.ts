import type { BrokerRecord, OutgoingMessage, RecordBatch } from '../../libs/broker/broker.js';
import { deadLetterPoison, type DeadLetters } from '../../libs/pipeline/dead-letter.js';
import { deliveryJobMessage } from '../../libs/pipeline/delivery-job.js';
import { decodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { handleIsolatingPoison, poisonReason } from '../../libs/pipeline/poison-records.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { filterDocument } from '../../libs/filters/filter-document.js';
import { openStoredPayload, sealedPayload, storedPayload, storedSealedPayload, type PayloadPolicy, type StoredPayload } from '../../libs/payload/stored-payload.js';
import { matchRoutes, type RoutedTarget, type RouteTarget } from '../../libs/routing/route-targets.js';
import { allForRows, runForRows } from '../../libs/store/rows-statement.js';
import { createPendingDeliveries } from '../../libs/ledger/deliveries.js';

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
   * New destinations' jobs go through relay.fresh (Kafka: a deliverer takes a new topic in only by a
   * rebalance). Off on the embedded log, whose deliverer subscribes to a new topic at once.
   */
  freshDestinations?: boolean;
}

interface PlannedDelivery {
  id: string;
  destinationId: string;
  destinationName: string;
}

interface RoutedEvent {
  meta: IngestMeta;
  body: Buffer;
  deliveries: PlannedDelivery[];
}

interface EventState {
  status: string;
  deliveries: number;
  failureReason: string | null;
  /** The routes whose filters turned the event away. */
  filteredRouteIds: string[];
}

const EVENT_COLUMNS = `id, org_id, source_id, status, headers, content_type, payload, payload_sealed, payload_text, payload_size, payload_hash,
  signature_valid, client_ip, received_at, validated_at, queued_at, created_at, deliveries_count, deliveries_succeeded, deliveries_failed, failure_reason,
  ingest_path, ingest_query, filtered_route_ids`;

/** Events are inserted unless they exist (a redelivered record). */
const EVENT_INSERT = {
  head: `INSERT INTO events (${EVENT_COLUMNS})`,
  row: '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?)',
  tail: 'ON CONFLICT (id) DO NOTHING',
};

/** An event row's values, in EVENT_INSERT's order. */
function eventValues(tx: SqlClient, meta: IngestMeta, payload: StoredPayload, state: EventState, now: number): unknown[] {
  return [
    meta.eventId,
    meta.orgId,
    meta.sourceId,
    state.status,
    JSON.stringify(meta.headers),
    meta.contentType,
    payload.bytes,
    tx.bool(payload.sealed),
    payload.searchText,
    meta.payloadSize,
    meta.payloadHash,
    tx.bool(meta.signatureValid),
    meta.clientIp,
    meta.receivedAt,
    meta.validatedAt,
    meta.queuedAt,
    now,
    state.deliveries,
    state.failureReason,
    meta.path ?? null,
    meta.query ? JSON.stringify(meta.query) : null,
    JSON.stringify(state.filteredRouteIds),
  ];
}

/** Inserts the event row unless it exists; the number of rows inserted (0 or 1). */
function insertEvent(tx: SqlClient, meta: IngestMeta, payload: StoredPayload, state: EventState, now: number): Promise<number> {
  return runForRows(tx, EVENT_INSERT, [eventValues(tx, meta, payload, state, now)]);
}

/** An event ready to store: its record decoded, its payload as stored, and where its routes send it. */
interface PlannedEvent {
  meta: IngestMeta;
  body: Buffer;
  payload: StoredPayload;
  routed: { targets: RouteTarget[]; filteredRouteIds: string[] };
}

/**
 * Inserts the events and their pending deliveries with a few multi-row statements (one round trip per
 * statement on PostgreSQL, where one per row made the router the bottleneck), skipping events a previous
 * run already stored (a redelivered record): the deliveries stored then are the ones to publish, so
 * nothing is created twice, and a duplicate's copy publishes none.
 */
async function persistEvents(tx: SqlClient, planned: PlannedEvent[], now: number): Promise<RoutedEvent[]> {
  const rows = planned.map(({ meta, payload, routed }) =>
    eventValues(tx, meta, payload, { status: routed.targets.length === 0 ? 'delivered' : 'pending', deliveries: routed.targets.length, failureReason: null, filteredRouteIds: routed.filteredRouteIds }, now),
  );
  const inserted = new Set((await allForRows<{ id: string }>(tx, { ...EVENT_INSERT, tail: `${EVENT_INSERT.tail} RETURNING id` }, rows)).map((row) => row.id));
  // An id twice in the batch is inserted by its first record; a later one is a redelivery of it.
  const firstIndex = new Map<string, number>();
  planned.forEach(({ meta }, index) => void (firstIndex.has(meta.eventId) || firstIndex.set(meta.eventId, index)));
  const creates = planned.map(({ meta }, index) => inserted.has(meta.eventId) && firstIndex.get(meta.eventId) === index);
  const created = await createPendingDeliveries(
    tx,
    planned.map(({ meta, routed }, index) => ({ orgId: meta.orgId, eventId: meta.eventId, targets: creates[index] ? routed.targets : [] })),
    now,
  );
  const lastEventAt = new Map(planned.filter((_, index) => creates[index]).map(({ meta }) => [meta.sourceId, meta.receivedAt]));
  for (const [sourceId, at] of lastEventAt) await tx.run('UPDATE sources SET last_event_at = ? WHERE id = ?', [at, sourceId]);
  const redelivered = planned.filter(({ meta }, index) => !creates[index] && !meta.duplicate).map(({ meta }) => meta.eventId);
  const stored = await pendingDeliveries(tx, [...new Set(redelivered)]);
  return planned.map(({ meta, body }, index) => ({
    meta,
    body,
    deliveries: creates[index] ? created[index]! : meta.duplicate ? [] : (stored.get(meta.eventId) ?? []),
  }));
}

/** The pending deliveries stored for these events, by event. */
async function pendingDeliveries(tx: SqlClient, eventIds: string[]): Promise<Map<string, PlannedDelivery[]>> {
  const byEvent = new Map<string, PlannedDelivery[]>();
  if (eventIds.length === 0) return byEvent;
  const rows = await tx.all<PlannedDelivery & { eventId: string }>(
    `SELECT event_id AS "eventId", id, destination_id AS "destinationId", destination_name AS "destinationName" FROM deliveries
     WHERE event_id IN (${eventIds.map(() => '?').join(', ')}) AND status = 'pending' ORDER BY id`,
    eventIds,
  );
  for (const { eventId, ...delivery } of rows) {
    const deliveries = byEvent.get(eventId);
    if (deliveries) deliveries.push(delivery);
    else byEvent.set(eventId, [delivery]);
  }
  return byEvent;
}

/** The sources that still exist, with how their payloads are stored. */
async function liveSources(tx: SqlClient, sourceIds: string[]): Promise<Map<string, PayloadPolicy>> {
  const unique = [...new Set(sourceIds)];
  const rows = await tx.all<{ id: string; encrypt_fields: string; mask_fields: string }>(
    `SELECT id, encrypt_fields, mask_fields FROM sources WHERE id IN (${unique.map(() => '?').join(', ')})`,
    unique,
  );
  return new Map(rows.map((row) => [row.id, { encryptFields: JSON.parse(row.encrypt_fields), maskFields: JSON.parse(row.mask_fields) }]));
}

/**
 * The event of a record the router could not handle, when its metadata can be read and its source still
 * exists: stored `failed` with the reason and its body sealed whole, so the sender's `200` is not silently
 * lost and the API tells what happened. An event already stored is marked the same way.
 */
async function storeFailedEvent(deps: RouterDeps, record: BrokerRecord, detail: string): Promise<void> {
  const { meta } = decodeIngestMessage(record);
  const failureReason = `The event could not be routed: ${detail}`;
  await deps.sql.transaction(async (tx) => {
    const live = await liveSources(tx, [meta.sourceId]);
    if (!live.has(meta.sourceId)) return;
    // Sealed whole (or kept sealed): nothing else about the body can be trusted to work.
    const payload = meta.sealed ? { bytes: record.value, sealed: true, searchText: null } : sealedPayload(record.value, deps.secrets);
    const inserted = await insertEvent(tx, meta, payload, { status: 'failed', deliveries: 0, failureReason, filteredRouteIds: [] }, deps.now());
    if (inserted > 0) await tx.run('UPDATE sources SET last_event_at = ? WHERE id = ?', [meta.receivedAt, meta.sourceId]);
    else if (!meta.duplicate) await tx.run(`UPDATE events SET status = 'failed', failure_reason = ? WHERE id = ?`, [failureReason, meta.eventId]);
  });
}

/**
 * Consumes a batch of `relay.ingest`: persists events and pending deliveries in one transaction, then
 * publishes one job per routed destination. The offsets are committed after both, by returning. A record
 * that fails on its own (poison-records.ts) is set aside with its event marked, and the rest go on.
 */
export async function routeEvents(deps: RouterDeps, batch: RecordBatch): Promise<void> {
  await handleIsolatingPoison(batch.records, {
    all: (records) => routeRecords(deps, records),
    one: (record) => routeRecords(deps, [record]),
    deadLetter: (record, error) => deadLetterPoison(deps.deadLetters, record, error),
    markEvent: (record, error) => storeFailedEvent(deps, record, poisonReason(error).detail),
  });
}

async function routeRecords(deps: RouterDeps, records: BrokerRecord[]): Promise<void> {
  const events = records.map(decodeIngestMessage);
  const targets = await Promise.all(events.map((event) => deps.routesFor(event.meta.sourceId)));
  const now = deps.now();
  const routed: RoutedEvent[] = await deps.sql.transaction(async (tx) => {
    const planned: PlannedEvent[] = [];
    const live = await liveSources(tx, events.map((event) => event.meta.sourceId));
    for (const [index, event] of events.entries()) {
      // A source deleted after ingest took its events with it; there is nothing left to store.
      const policy = live.get(event.meta.sourceId);
      if (!policy) continue;
      const { meta, body } = event;
      const payload = meta.sealed ? storedSealedPayload(body, meta.contentType, policy, deps.secrets) : storedPayload(body, meta.contentType, policy, deps.secrets);
      const routed = matchRoutes(targets[index]!, () =>
        filterDocument({ body: openStoredPayload(body, meta.sealed === true, deps.secrets), contentType: meta.contentType, headers: meta.headers, query: meta.query, path: meta.path }),
      );
      planned.push({ meta, body, payload, routed });
    }
    return persistEvents(tx, planned, now);
  });
  // A redelivered record's deliveries come from the store: a destination no longer routed gets its own
  // topic. So does an ordered one: a job relay.fresh moves back to its own topic could be overtaken.
  const createdAt = new Map(
    deps.freshDestinations ? targets.flat().filter((target) => !target.destinationOrdered).map((target) => [target.destinationId, target.destinationCreatedAt]) : [],
  );
  const byTopic = new Map<string, OutgoingMessage[]>();
  for (const { meta, body, deliveries } of routed) {
    for (const delivery of deliveries) {
      const { topic, message } = deliveryJobMessage(
        {
          deliveryId: delivery.id,
          eventId: meta.eventId,
          orgId: meta.orgId,
          sourceId: meta.sourceId,
          sourceSlug: meta.sourceSlug,
          destinationId: delivery.destinationId,
          attemptNumber: 1,
          dueAt: 0,
          contentType: meta.contentType,
          providerHeaders: meta.headers,
          signatureValid: meta.signatureValid,
          receivedAt: meta.receivedAt,
          ...(meta.sealed ? { sealed: true } : {}),
          ...(createdAt.has(delivery.destinationId) ? { destinationCreatedAt: createdAt.get(delivery.destinationId) } : {}),
        },
        body,
        now,
      );
      const messages = byTopic.get(topic);
      if (messages) messages.push(message);
      else byTopic.set(topic, [message]);
    }
  }
  await Promise.all([...byTopic].map(([topic, messages]) => deps.publish(topic, messages)));
}
