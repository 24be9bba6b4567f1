import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonValue, type FieldTypes } from './record-json.js';


/** What became of the delivery after this attempt. */
export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

/** One try at a delivery, success or not: failed attempts are data, recorded like any other. */
export interface AttemptRecord {
  attemptId: string;
  deliveryId: string;
  eventId: string;
  orgId: string;
  destinationId: string;
  attemptNumber: number;
  startedAt: number;
  completedAt: number;
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  errorKind: string | null;
  /** At most 10 KB of the destination's answer. */
  responseBody: string;
  /** The delivery's status after this attempt, and when the next attempt is due if it is retrying. */
  deliveryStatus: Exclude<DeliveryStatus, 'pending'>;
  nextAttemptAt: number | null;
}

export function encodeAttemptRecord(attempt: AttemptRecord): OutgoingMessage {
  return { key: attempt.eventId, value: Buffer.from(JSON.stringify(attempt)) };
}

const ATTEMPT_FIELDS: FieldTypes = {
  attemptId: 'string',
  deliveryId: 'string',
  eventId: 'string',
  orgId: 'string',
  destinationId: 'string',
  attemptNumber: 'number',
  startedAt: 'number',
  completedAt: 'number',
  ok: 'boolean',
  statusCode: 'number?',
  latencyMs: 'number',
  error: 'string?',
  errorKind: 'string?',
  responseBody: 'string',
  deliveryStatus: 'string',
  nextAttemptAt: 'number?',
};

export function decodeAttemptRecord(record: BrokerRecord): AttemptRecord {
  return jsonValue<AttemptRecord>(record, 'attempt', ATTEMPT_FIELDS);
}
