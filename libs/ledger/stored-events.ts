import type { IngestMeta } from '../pipeline/ingest-message.js';
import type { PayloadPolicy, StoredPayload } from '../payload/stored-payload.js';
import { decodeRows } from '../store/row-schema.js';
import { allForRows, runForRows } from '../store/rows-statement.js';
import type { SqlClient } from '../store/sql-client.js';
import type { TransformationReport } from '../transformations/route-transformations.js';
import { payloadPolicyRowSchema, pendingDeliveryRowSchema } from './ledger-rows.js';
import { createPendingDeliveries, createTransformationFailures, type DeliveryTargetName } from './deliveries.js';

/** A delivery to publish a job for. */
export interface StoredDelivery extends DeliveryTargetName {
  id: string;
}

/** An event to store: its record's metadata, its payload as stored, and where its routes send it. */
export interface NewEvent {
  meta: IngestMeta;
  payload: StoredPayload;
  targets: DeliveryTargetName[];
  /** The routes whose filters turned the event away. */
  filteredRouteIds: string[];
  /** Routes whose transformation failed: their deliveries are stored `failed`, with no attempt. */
  failed?: (DeliveryTargetName & { report: TransformationReport })[];
  /** The event's W3C trace id, from its ingest record (null for records of older gateways). */
  traceId: string | null;
}

interface EventState {
  status: string;
  deliveries: number;
  failureReason: string | null;
  filteredRouteIds: string[];
  traceId: string | null;
}

const EVENT_COLUMNS = `id, org_id, source_id, status, headers, content_type, payload, payload_sealed, payload_text, payload_size, payload_hash,
  signature_valid, client_ip, received_at, validated_at, queued_at, created_at, deliveries_count, deliveries_succeeded, deliveries_failed, failure_reason,
  ingest_path, ingest_query, filtered_route_ids, trace_id`;

/** Events are inserted unless they exist (a redelivered record). */
const EVENT_INSERT = {
  head: `INSERT INTO events (${EVENT_COLUMNS})`,
  row: '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?)',
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
    state.traceId,
  ];
}

const touchSource = (tx: SqlClient, sourceId: string, at: number) => tx.run('UPDATE sources SET last_event_at = ? WHERE id = ?', [at, sourceId]);

/**
 * Stores events and their pending deliveries with a few multi-row statements (one round trip per
 * statement on PostgreSQL, where one per row made the router the bottleneck), in the caller's
 * transaction, skipping events a previous run already stored (a redelivered record): the deliveries
 * stored then are the ones to publish, so nothing is created twice, and a duplicate's copy publishes none.
 * Returns each event's deliveries, in the order given.
 */
export async function storeEvents(tx: SqlClient, events: NewEvent[], now: number): Promise<StoredDelivery[][]> {
  const rows = events.map(({ meta, payload, targets, filteredRouteIds, traceId }) =>
    eventValues(tx, meta, payload, { status: targets.length === 0 ? 'delivered' : 'pending', deliveries: targets.length, failureReason: null, filteredRouteIds, traceId }, now),
  );
  const inserted = new Set((await allForRows<{ id: string }>(tx, { ...EVENT_INSERT, tail: `${EVENT_INSERT.tail} RETURNING id` }, rows)).map((row) => row.id));
  // An id twice in the batch is inserted by its first record; a later one is a redelivery of it.
  const firstIndex = new Map<string, number>();
  events.forEach(({ meta }, index) => void (firstIndex.has(meta.eventId) || firstIndex.set(meta.eventId, index)));
  const creates = events.map(({ meta }, index) => inserted.has(meta.eventId) && firstIndex.get(meta.eventId) === index);
  const created = await createPendingDeliveries(
    tx,
    events.map(({ meta, targets }, index) => ({ orgId: meta.orgId, eventId: meta.eventId, targets: creates[index] ? targets : [] })),
    now,
  );
  await createTransformationFailures(
    tx,
    events.flatMap(({ meta, failed = [] }, index) => (creates[index] ? failed.map((target) => ({ ...target, orgId: meta.orgId, eventId: meta.eventId })) : [])),
    now,
  );
  const lastEventAt = new Map(events.filter((_, index) => creates[index]).map(({ meta }) => [meta.sourceId, meta.receivedAt]));
  for (const [sourceId, at] of lastEventAt) await touchSource(tx, sourceId, at);
  const redelivered = events.filter(({ meta }, index) => !creates[index] && !meta.duplicate).map(({ meta }) => meta.eventId);
  const stored = await pendingDeliveries(tx, [...new Set(redelivered)]);
  return events.map(({ meta }, index) => (creates[index] ? created[index]! : meta.duplicate ? [] : (stored.get(meta.eventId) ?? [])));
}

/** The pending deliveries stored for these events, by event. */
async function pendingDeliveries(tx: SqlClient, eventIds: string[]): Promise<Map<string, StoredDelivery[]>> {
  const byEvent = new Map<string, StoredDelivery[]>();
  if (eventIds.length === 0) return byEvent;
  const rows = await tx.all(
    `SELECT event_id AS "eventId", id, destination_id AS "destinationId", destination_name AS "destinationName" FROM deliveries
     WHERE event_id IN (${eventIds.map(() => '?').join(', ')}) AND status = 'pending' ORDER BY id`,
    eventIds,
  );
  for (const { eventId, ...delivery } of decodeRows(pendingDeliveryRowSchema, 'deliveries', rows)) {
    const deliveries = byEvent.get(eventId);
    if (deliveries) deliveries.push(delivery);
    else byEvent.set(eventId, [delivery]);
  }
  return byEvent;
}

/**
 * Stores the event of a record that could not be handled `failed`, with the reason, or marks the
 * stored one so (a duplicate's copy changes nothing), in the caller's transaction.
 */
export async function storeFailedEvent(tx: SqlClient, meta: IngestMeta, payload: StoredPayload, failureReason: string, now: number): Promise<void> {
  const inserted = await runForRows(tx, EVENT_INSERT, [eventValues(tx, meta, payload, { status: 'failed', deliveries: 0, failureReason, filteredRouteIds: [], traceId: null }, now)]);
  if (inserted > 0) await touchSource(tx, meta.sourceId, meta.receivedAt);
  else if (!meta.duplicate) await tx.run(`UPDATE events SET status = 'failed', failure_reason = ? WHERE id = ?`, [failureReason, meta.eventId]);
}

/** The sources that still exist, with how their payloads are stored: a deleted source's events are not stored. */
export async function livePayloadPolicies(tx: SqlClient, sourceIds: string[]): Promise<Map<string, PayloadPolicy>> {
  const unique = [...new Set(sourceIds)];
  const rows = await tx.all(`SELECT id, encrypt_fields, mask_fields FROM sources WHERE id IN (${unique.map(() => '?').join(', ')})`, unique);
  return new Map(decodeRows(payloadPolicyRowSchema, 'sources', rows).map((row) => [row.id, { encryptFields: row.encrypt_fields, maskFields: row.mask_fields }]));
}
