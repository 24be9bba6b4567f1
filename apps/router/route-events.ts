import type { OutgoingMessage, RecordBatch } from '../../libs/broker/broker.js';
import { newId } from '../../libs/ids/ids.js';
import { destinationTopic, encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { decodeRecords } from '../../libs/pipeline/decode-records.js';
import { decodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { storedPayload, type PayloadPolicy, type StoredPayload } from '../../libs/payload/stored-payload.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import type { RouteTarget } from './route-targets.js';

/** What routing needs; the composition root wires the store, the broker and the route cache in. */
export interface RouterDeps {
  sql: SqlClient;
  routesFor(sourceId: string): Promise<RouteTarget[]>;
  /** Publishes to one topic and resolves once the broker holds the messages durably. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  now(): number;
  /** Seals the payloads of sources with `encryptFields`. */
  secrets: SecretBox;
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

/**
 * Inserts the event and its pending deliveries, unless a previous run already did (a redelivered record):
 * then the deliveries stored then are the ones to publish, so nothing is created twice.
 */
async function persistEvent(tx: SqlClient, event: { meta: IngestMeta; payload: StoredPayload }, targets: RouteTarget[], now: number): Promise<PlannedDelivery[]> {
  const { meta, payload } = event;
  const inserted = await tx.run(
    `INSERT INTO events (id, org_id, source_id, status, headers, content_type, payload, payload_sealed, payload_text, payload_size, payload_hash,
       signature_valid, client_ip, received_at, validated_at, queued_at, created_at, deliveries_count, deliveries_succeeded, deliveries_failed)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0) ON CONFLICT (id) DO NOTHING`,
    [
      meta.eventId,
      meta.orgId,
      meta.sourceId,
      targets.length === 0 ? 'delivered' : 'pending',
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
      targets.length,
    ],
  );
  if (inserted === 0) {
    // The event's own record publishes its jobs (again, if it is redelivered); a duplicate's copy adds none.
    if (meta.duplicate) return [];
    return tx.all<PlannedDelivery>(
      `SELECT id, destination_id AS "destinationId", destination_name AS "destinationName" FROM deliveries
       WHERE event_id = ? AND status = 'pending' ORDER BY id`,
      [meta.eventId],
    );
  }
  const deliveries = targets.map((target) => ({ id: newId('dlv'), ...target }));
  for (const delivery of deliveries) {
    await tx.run(
      `INSERT INTO deliveries (id, org_id, event_id, destination_id, destination_name, status, attempt_count, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
      [delivery.id, meta.orgId, meta.eventId, delivery.destinationId, delivery.destinationName, now, now],
    );
  }
  await tx.run('UPDATE sources SET events_count = events_count + 1, last_event_at = ? WHERE id = ?', [meta.receivedAt, meta.sourceId]);
  return deliveries;
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
 * Consumes a batch of `relay.ingest`: persists events and pending deliveries in one transaction, then
 * publishes one job per routed destination. The offsets are committed after both, by returning.
 */
export async function routeEvents(deps: RouterDeps, batch: RecordBatch): Promise<void> {
  const events = await decodeRecords(batch.records, decodeIngestMessage, deps.publish);
  const targets = await Promise.all(events.map((event) => deps.routesFor(event.meta.sourceId)));
  const now = deps.now();
  const routed: RoutedEvent[] = await deps.sql.transaction(async (tx) => {
    const result: RoutedEvent[] = [];
    const live = await liveSources(tx, events.map((event) => event.meta.sourceId));
    for (const [index, event] of events.entries()) {
      // A source deleted after ingest took its events with it; there is nothing left to store.
      const policy = live.get(event.meta.sourceId);
      if (!policy) continue;
      const payload = storedPayload(event.body, event.meta.contentType, policy, deps.secrets);
      result.push({ ...event, deliveries: await persistEvent(tx, { meta: event.meta, payload }, targets[index]!, now) });
    }
    return result;
  });
  const byTopic = new Map<string, OutgoingMessage[]>();
  for (const { meta, body, deliveries } of routed) {
    for (const delivery of deliveries) {
      const topic = destinationTopic(delivery.destinationId);
      const job = encodeDeliveryJob(
        {
          deliveryId: delivery.id,
          eventId: meta.eventId,
          orgId: meta.orgId,
          sourceId: meta.sourceId,
          destinationId: delivery.destinationId,
          attemptNumber: 1,
          dueAt: 0,
          contentType: meta.contentType,
          providerHeaders: meta.headers,
          signatureValid: meta.signatureValid,
          receivedAt: meta.receivedAt,
        },
        body,
      );
      const messages = byTopic.get(topic);
      if (messages) messages.push(job);
      else byTopic.set(topic, [job]);
    }
  }
  await Promise.all([...byTopic].map(([topic, messages]) => deps.publish(topic, messages)));
}
