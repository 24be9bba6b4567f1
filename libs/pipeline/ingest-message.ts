import { z } from 'zod';
import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonHeader } from './record-json.js';

/** Header or query values by name, as received: one value, or several of the same name. */
export const receivedValues = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/** What the gateway knows about a received webhook, besides its body. */
export const ingestMetaSchema = z.object({
  eventId: z.string(),
  orgId: z.string(),
  sourceId: z.string(),
  /** Copied into the delivery jobs, which send it as X-Relay-Source (absent in records of older gateways). */
  sourceSlug: z.string().optional(),
  /** Header names lower-cased, as received. */
  headers: receivedValues,
  contentType: z.string().nullable(),
  clientIp: z.string().nullable(),
  payloadHash: z.string(),
  payloadSize: z.number(),
  signatureValid: z.boolean(),
  receivedAt: z.number(),
  validatedAt: z.number(),
  queuedAt: z.number(),
  /** The ingest URL's path and query parameters, which route filters read (absent in records of older gateways). */
  path: z.string().optional(),
  query: receivedValues.optional(),
  /**
   * A duplicate's copy, published under the id of the event holding its dedup key. The key is claimed
   * before that event is published, so a crash in between leaves a key naming an event that never became
   * durable: the copy makes it exist. The router drops a copy of an event it has already stored.
   */
  duplicate: z.literal(true).optional(),
  /** The record's value is the body sealed (`sealedPayload`), for a source with `encryptFields`. */
  sealed: z.literal(true).optional(),
});

export type IngestMeta = z.infer<typeof ingestMetaSchema>;

const META_HEADER = 'relay-meta';

/** The body travels as the record value, byte-exact; the metadata as one JSON header. Key = source id. */
export function encodeIngestMessage(meta: IngestMeta, body: Buffer): OutgoingMessage {
  return { key: meta.sourceId, value: body, headers: { [META_HEADER]: JSON.stringify(meta) } };
}

export function decodeIngestMessage(record: BrokerRecord): { meta: IngestMeta; body: Buffer } {
  return { meta: jsonHeader(record, META_HEADER, ingestMetaSchema), body: record.value };
}
