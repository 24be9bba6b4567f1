import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { encodeDeliveryJob, JOB_HEADER, type DeliveryJob } from './delivery-job.js';
import { poisonReason } from './poison-records.js';
import { DEAD_LETTER_TOPIC } from './topology.js';

/** Why a record went to relay.dead; also the `reason` label of `relay_dead_letters_total`. */
export type DeadLetterReason = 'retries_exhausted' | 'destination_gone' | 'destination_deleted' | 'malformed_record' | 'poison_record';

export const DEAD_REASON_HEADER = 'relay-dead-reason';
/** What exactly went wrong with a malformed or poison record (the error's message). */
export const DEAD_DETAIL_HEADER = 'relay-dead-detail';
/** Where a malformed or poison record was read (`topic/partition@offset`, or `ordered_waiting/<deliveryId>` for a kept job); a job's own header names its destination otherwise. */
export const DEAD_ORIGIN_HEADER = 'relay-dead-origin';

/** The job as it would be retried (attempt number of its last try), body byte-exact, plus why it stopped. */
export function deadLetterOfJob(job: DeliveryJob, body: Buffer, reason: DeadLetterReason): OutgoingMessage {
  const message = encodeDeliveryJob(job, body);
  return { ...message, headers: { ...message.headers, [DEAD_REASON_HEADER]: reason } };
}

/** A record no consumer can handle is kept as it was (body still sealed if it was), so it can be inspected and repaired. */
export function deadLetterOfRecord(record: BrokerRecord, reason: 'malformed_record' | 'poison_record', detail: string): OutgoingMessage {
  return {
    key: record.key,
    value: record.value,
    headers: {
      ...record.headers,
      [DEAD_REASON_HEADER]: reason,
      [DEAD_DETAIL_HEADER]: detail.slice(0, 1000),
      [DEAD_ORIGIN_HEADER]: `${record.topic}/${record.partition}@${record.offset}`,
    },
  };
}

/**
 * A job kept in the store that no longer decodes: its body and its job text as stored (in the job
 * header, as a record carries it), with what went wrong and where it was kept (`origin`).
 */
export function deadLetterOfStoredJob(row: { sourceId: string; job: string; body: Uint8Array }, origin: string, detail: string): OutgoingMessage {
  return {
    key: row.sourceId,
    value: Buffer.from(row.body),
    headers: {
      [JOB_HEADER]: row.job,
      [DEAD_REASON_HEADER]: 'malformed_record',
      [DEAD_DETAIL_HEADER]: detail.slice(0, 1000),
      [DEAD_ORIGIN_HEADER]: origin,
    },
  };
}

export interface DeadLetterCounter {
  inc(labels: { reason: DeadLetterReason }): void;
}

/** The one way into relay.dead: every consumer publishes its dead letters here, and each is counted by reason. */
export type DeadLetters = (reason: DeadLetterReason, message: OutgoingMessage) => Promise<void>;

/** A record that failed on its own (poison-records.ts), to relay.dead with what went wrong. */
export function deadLetterPoison(deadLetters: DeadLetters, record: BrokerRecord, error: unknown): Promise<void> {
  const reason = poisonReason(error);
  return deadLetters(reason.kind, deadLetterOfRecord(record, reason.kind, reason.detail));
}

export function createDeadLetters(publish: (topic: string, messages: OutgoingMessage[]) => Promise<void>, counter: DeadLetterCounter): DeadLetters {
  return async (reason, message) => {
    await publish(DEAD_LETTER_TOPIC, [message]);
    counter.inc({ reason });
  };
}
