import { z } from 'zod';
import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { jsonValue } from './record-json.js';

/** What became of the delivery after this attempt. */
export const deliveryStatusSchema = z.enum(['pending', 'retrying', 'delivered', 'failed']);

export type DeliveryStatus = z.infer<typeof deliveryStatusSchema>;

/** One try at a delivery, success or not: failed attempts are data, recorded like any other. */
export const attemptRecordSchema = z.object({
  attemptId: z.string(),
  deliveryId: z.string(),
  eventId: z.string(),
  orgId: z.string(),
  destinationId: z.string(),
  attemptNumber: z.number(),
  startedAt: z.number(),
  completedAt: z.number(),
  ok: z.boolean(),
  statusCode: z.number().nullable(),
  latencyMs: z.number(),
  error: z.string().nullable(),
  errorKind: z.string().nullable(),
  /** At most 10 KB of the destination's answer. */
  responseBody: z.string(),
  /** The delivery's status after this attempt, and when the next attempt is due if it is retrying. */
  deliveryStatus: deliveryStatusSchema.exclude(['pending']),
  nextAttemptAt: z.number().nullable(),
});

export type AttemptRecord = z.infer<typeof attemptRecordSchema>;

export function encodeAttemptRecord(attempt: AttemptRecord): OutgoingMessage {
  return { key: attempt.eventId, value: Buffer.from(JSON.stringify(attempt)) };
}

export function decodeAttemptRecord(record: BrokerRecord): AttemptRecord {
  return jsonValue(record, 'attempt', attemptRecordSchema);
}
