import { z } from 'zod';
import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { receivedValues } from './ingest-message.js';
import { jsonHeader } from './record-json.js';
import { destinationTopic, LANES_TOPIC } from './topology.js';

/**
 * Where a job is published, first attempt or due retry: the lanes (keyed by destination) when the
 * router put it there, else its destination's own topic.
 */
export function deliveryJobMessage(job: DeliveryJob, body: Buffer): { topic: string; message: OutgoingMessage } {
  const message = encodeDeliveryJob(job, body);
  if (!job.laned) return { topic: destinationTopic(job.destinationId), message };
  return { topic: LANES_TOPIC, message: { ...message, key: job.destinationId } };
}

/**
 * A first attempt's job as the router or a replay publishes it: through the lanes on Kafka (`lanes`),
 * unless its destination keeps its sources' order, which its own topic keeps (a job the lanes parked
 * could be overtaken by a later one still in the lanes).
 */
export function withLane(job: DeliveryJob, lanes: boolean, destinationOrdered: boolean): DeliveryJob {
  return lanes && !destinationOrdered ? { ...job, laned: true } : job;
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
  /** Set by the router and replays on Kafka (`withLane`): the job, retries included, goes through the lanes. */
  laned: z.boolean().optional(),
  /**
   * Set when the route's transformation made the request (first-attempt.ts): the record value is its
   * body, and `contentType` and `providerHeaders` are its own.
   */
  transformationId: z.string().optional(),
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

export const JOB_HEADER = 'relay-job';

/**
 * Loose: retries and dead letters publish the decoded job again, so fields a newer router added pass
 * through an older deliverer unchanged.
 */
const receivedJob = deliveryJobSchema.loose();

/** Key = source id, so first attempts keep per-source order. */
export function encodeDeliveryJob(job: DeliveryJob, body: Buffer): OutgoingMessage {
  return { key: job.sourceId, value: body, headers: { [JOB_HEADER]: JSON.stringify(job) } };
}

/** A job kept in the store as JSON text (an ordered line's waiting jobs), checked as a record's job header is. */
export function decodeStoredDeliveryJob(text: string): DeliveryJob {
  return receivedJob.parse(JSON.parse(text));
}

export function decodeDeliveryJob(record: BrokerRecord): { job: DeliveryJob; body: Buffer } {
  return { job: jsonHeader(record, JOB_HEADER, receivedJob), body: record.value };
}
