import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonHeader, type FieldTypes } from './record-json.js';


/** What the gateway knows about a received webhook, besides its body. */
export interface IngestMeta {
  eventId: string;
  orgId: string;
  sourceId: string;
  /** Header names lower-cased, as received. */
  headers: Record<string, string | string[]>;
  contentType: string | null;
  clientIp: string | null;
  payloadHash: string;
  payloadSize: number;
  signatureValid: boolean;
  receivedAt: number;
  validatedAt: number;
  queuedAt: number;
  /** The ingest URL's path and query parameters, which route filters read (absent in records of older gateways). */
  path?: string;
  query?: Record<string, string | string[]>;
  /**
   * A duplicate's copy, published under the id of the event holding its dedup key. The key is claimed
   * before that event is published, so a crash in between leaves a key naming an event that never became
   * durable: the copy makes it exist. The router drops a copy of an event it has already stored.
   */
  duplicate?: true;
  /** The record's value is the body sealed (`sealedPayload`), for a source with `encryptFields`. */
  sealed?: true;
}

const META_HEADER = 'relay-meta';

/** The body travels as the record value, byte-exact; the metadata as one JSON header. Key = source id. */
export function encodeIngestMessage(meta: IngestMeta, body: Buffer): OutgoingMessage {
  return { key: meta.sourceId, value: body, headers: { [META_HEADER]: JSON.stringify(meta) } };
}

const META_FIELDS: FieldTypes = {
  eventId: 'string',
  orgId: 'string',
  sourceId: 'string',
  headers: 'object',
  contentType: 'string?',
  clientIp: 'string?',
  payloadHash: 'string',
  payloadSize: 'number',
  signatureValid: 'boolean',
  receivedAt: 'number',
  validatedAt: 'number',
  queuedAt: 'number',
};

export function decodeIngestMessage(record: BrokerRecord): { meta: IngestMeta; body: Buffer } {
  return { meta: jsonHeader<IngestMeta>(record, META_HEADER, META_FIELDS), body: record.value };
}
