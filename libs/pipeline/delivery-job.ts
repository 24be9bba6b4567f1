import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonHeader } from './record-json.js';

/** Topic of one destination's delivery jobs: a slow destination never delays another. */
export const destinationTopic = (destinationId: string) => `relay.dst.${destinationId}`;
export const DESTINATION_TOPIC_PATTERN = /^relay\.dst\./;
export const DEAD_LETTER_TOPIC = 'relay.dead';

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
}

const JOB_HEADER = 'relay-job';

/** Key = source id, so first attempts keep per-source order. */
export function encodeDeliveryJob(job: DeliveryJob, body: Buffer): OutgoingMessage {
  return { key: job.sourceId, value: body, headers: { [JOB_HEADER]: JSON.stringify(job) } };
}

export function decodeDeliveryJob(record: BrokerRecord): { job: DeliveryJob; body: Buffer } {
  return { job: jsonHeader<DeliveryJob>(record, JOB_HEADER), body: record.value };
}
