import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonHeader, type FieldTypes } from './record-json.js';
import { destinationTopic, FRESH_DESTINATIONS_TOPIC } from './topology.js';

/**
 * How long after its creation a destination's jobs go through relay.fresh: well past the
 * deliverers' periodic subscription refresh (30 s) and the rebalance it takes (session timeout).
 */
export const FRESH_DESTINATION_MS = 120_000;

/**
 * Where a job is published, first attempt or due retry: relay.fresh (keyed by destination) while its
 * destination is new, else the destination's own topic.
 */
export function deliveryJobMessage(job: DeliveryJob, body: Buffer, now: number): { topic: string; message: OutgoingMessage } {
  const message = encodeDeliveryJob(job, body);
  const createdAt = Number.isFinite(job.destinationCreatedAt) ? job.destinationCreatedAt! : 0;
  if (now - createdAt >= FRESH_DESTINATION_MS) return { topic: destinationTopic(job.destinationId), message };
  return { topic: FRESH_DESTINATIONS_TOPIC, message: { ...message, key: job.destinationId } };
}

/** One attempt to make: the event's body is the record value, byte-exact; this travels as a header. */
export interface DeliveryJob {
  deliveryId: string;
  eventId: string;
  orgId: string;
  sourceId: string;
  destinationId: string;
  /** 1-based number of the attempt this job asks for. */
  attemptNumber: number;
  /** Not before this instant (epoch ms); 0 for a first attempt. */
  dueAt: number;
  contentType: string | null;
  /** The provider's headers as received, names lower-cased. */
  providerHeaders: Record<string, string | string[]>;
  signatureValid: boolean;
  receivedAt: number;
  /** The record's value is the body sealed (`sealedPayload`): the deliverer opens it just before sending. */
  sealed?: boolean;
  /** Epoch ms; set by the router so that a new destination's jobs, retries included, go through relay.fresh. */
  destinationCreatedAt?: number;
}

const JOB_HEADER = 'relay-job';

/** Key = source id, so first attempts keep per-source order. */
export function encodeDeliveryJob(job: DeliveryJob, body: Buffer): OutgoingMessage {
  return { key: job.sourceId, value: body, headers: { [JOB_HEADER]: JSON.stringify(job) } };
}

const JOB_FIELDS: FieldTypes = {
  deliveryId: 'string',
  eventId: 'string',
  orgId: 'string',
  sourceId: 'string',
  destinationId: 'string',
  attemptNumber: 'number',
  dueAt: 'number',
  contentType: 'string?',
  providerHeaders: 'object',
  signatureValid: 'boolean',
  receivedAt: 'number',
};

export function decodeDeliveryJob(record: BrokerRecord): { job: DeliveryJob; body: Buffer } {
  return { job: jsonHeader<DeliveryJob>(record, JOB_HEADER, JOB_FIELDS), body: record.value };
}
