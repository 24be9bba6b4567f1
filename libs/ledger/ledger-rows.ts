import { z } from 'zod';
import { deliveryStatusSchema } from '../pipeline/attempt-record.js';

// The ledger's rows as its reads select them, one schema each (decoded with `decodeRows`). Booleans read
// back as 0/1 on SQLite and as booleans on PostgreSQL; BIGINT columns as numbers on both (sql-client.ts).
const flag = z.union([z.boolean(), z.number()]);
const text = z.string();
const at = z.number();

/** Every column of an event but the payload, as the API reads it. */
export const eventRecordSchema = z.object({
  id: text,
  sourceId: text,
  sourceName: text,
  /** The source's maskFields (JSON text), applied to every view of the payload. */
  maskFields: text,
  status: text,
  headers: text,
  contentType: text.nullable(),
  payloadSize: z.number(),
  payloadHash: text,
  payloadSealed: flag,
  payloadExpiredAt: at.nullable(),
  signatureValid: flag,
  receivedAt: at,
  validatedAt: at,
  queuedAt: at,
  createdAt: at,
  deliveriesCount: z.number(),
  deliveriesSucceeded: z.number(),
  deliveriesFailed: z.number(),
  /** Why the event ended `failed` when its record could not be handled (a poison record); null otherwise. */
  failureReason: text.nullable(),
  /** The ingest URL's path and query (JSON text), for route filters; null for events stored before they were kept. */
  ingestPath: text.nullable(),
  ingestQuery: text.nullable(),
  /** JSON text: the ids of the routes whose filters turned the event away; null before filters existed. */
  filteredRouteIds: text.nullable(),
  /** The event's W3C trace id; null for events stored before traces. */
  traceId: text.nullable(),
});
export type EventRecord = z.infer<typeof eventRecordSchema>;

export const eventSummarySchema = eventRecordSchema.pick({
  id: true,
  sourceId: true,
  status: true,
  headers: true,
  payloadSize: true,
  deliveriesCount: true,
  deliveriesSucceeded: true,
  receivedAt: true,
});
export type EventSummaryRecord = z.infer<typeof eventSummarySchema>;

export const deliveryRecordSchema = z.object({
  id: text,
  destinationId: text,
  destinationName: text,
  status: text,
  attemptCount: z.number(),
  statusCode: z.number().nullable(),
  error: text.nullable(),
  latencyMs: z.number().nullable(),
  deliveredAt: at.nullable(),
  /** `transformation_failed`, or null. */
  failureReason: text.nullable(),
  /** The transformation report as JSON, or null for a route without one. */
  transformation: text.nullable(),
  createdAt: at,
});
export type DeliveryRecord = z.infer<typeof deliveryRecordSchema>;

export const attemptRecordSchema = z.object({
  deliveryId: text,
  attemptNumber: z.number(),
  startedAt: at,
  completedAt: at,
  ok: flag,
  statusCode: z.number().nullable(),
  latencyMs: z.number(),
  error: text.nullable(),
});
export type AttemptRecordRow = z.infer<typeof attemptRecordSchema>;

/** A place in the event list's order: `(created_at, id)`. */
export const eventKeySchema = z.object({ createdAt: at, id: text });
export type EventKey = z.infer<typeof eventKeySchema>;

/** A pending delivery stored for an event, as a redelivered record's event reads it back. */
export const pendingDeliveryRowSchema = z.object({ eventId: text, id: text, destinationId: text, destinationName: text });

/** A row of a query that names deliveries only. */
export const deliveryIdRowSchema = z.object({ id: text });

/** An event with one of its deliveries (all null for an event without any), as refreshing its status reads them. */
export const eventDeliveryRowSchema = z.object({
  eventId: text,
  id: text.nullable(),
  destinationId: text.nullable(),
  status: deliveryStatusSchema.nullable(),
});

const fieldList = text.transform((json) => JSON.parse(json) as unknown).pipe(z.array(z.string()));

/** How a source's payloads are stored: its field lists as JSON text. */
export const payloadPolicyRowSchema = z.object({ id: text, encrypt_fields: fieldList, mask_fields: fieldList });
