import { z } from 'zod';
import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { receivedValues } from './ingest-message.js';
import { jsonHeader } from './record-json.js';
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
  const createdAt = job.destinationCreatedAt ?? 0;
  if (now - createdAt >= FRESH_DESTINATION_MS) return { topic: destinationTopic(job.destinationId), message };
  return { topic: FRESH_DESTINATIONS_TOPIC, message: { ...message, key: job.destinationId } };
}

/** One attempt to make: the event's body is the record value, byte-exact; this travels as a header. */
export const deliveryJobSchema = z.object({
  deliveryId: z.string(),
  eventId: z.string(),
  orgId: z.string(),
  sourceId: z.string(),
  /** Sent as X-Relay-Source; absent in older jobs, for which the deliverer looks it up. */
  sourceSlug: z.string().optional(),
  destinationId: z.string(),
  /** 1-based number of the attempt this job asks for. */
  attemptNumber: z.number(),
  /** Not before this instant (epoch ms); 0 for a first attempt. */
  dueAt: z.number(),
  contentType: z.string().nullable(),
  /** The provider's headers as received, names lower-cased. */
  providerHeaders: receivedValues,
  signatureValid: z.boolean(),
  receivedAt: z.number(),
  /** The record's value is the body sealed (`sealedPayload`): the deliverer opens it just before sending. */
  sealed: z.boolean().optional(),
  /** Epoch ms; set by the router so that a new destination's jobs, retries included, go through relay.fresh. */
  destinationCreatedAt: z.number().optional(),
});

export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

/** What a first attempt's job says of its event, whether the router or a replay creates the delivery. */
export type JobEvent = Pick<DeliveryJob, 'eventId' | 'orgId' | 'sourceId' | 'sourceSlug' | 'contentType' | 'providerHeaders' | 'signatureValid' | 'receivedAt' | 'sealed'>;

/** The job of a new delivery's first attempt, due at once. */
export function firstAttemptJob(event: JobEvent, delivery: { id: string; destinationId: string }): DeliveryJob {
  return {
    deliveryId: delivery.id,
    eventId: event.eventId,
    orgId: event.orgId,
    sourceId: event.sourceId,
    sourceSlug: event.sourceSlug,
    destinationId: delivery.destinationId,
    attemptNumber: 1,
    dueAt: 0,
    contentType: event.contentType,
    providerHeaders: event.providerHeaders,
    signatureValid: event.signatureValid,
    receivedAt: event.receivedAt,
    ...(event.sealed ? { sealed: true } : {}),
  };
}

const JOB_HEADER = 'relay-job';

/**
 * Loose: retries and dead letters publish the decoded job again, so fields a newer router added pass
 * through an older deliverer unchanged.
 */
const receivedJob = deliveryJobSchema.loose();

/** Key = source id, so first attempts keep per-source order. */
export function encodeDeliveryJob(job: DeliveryJob, body: Buffer): OutgoingMessage {
  return { key: job.sourceId, value: body, headers: { [JOB_HEADER]: JSON.stringify(job) } };
}

export function decodeDeliveryJob(record: BrokerRecord): { job: DeliveryJob; body: Buffer } {
  return { job: jsonHeader(record, JOB_HEADER, receivedJob), body: record.value };
}
