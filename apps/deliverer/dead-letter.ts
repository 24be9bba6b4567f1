import type { BrokerRecord, OutgoingMessage } from '../../libs/broker/broker.js';
import { encodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';

/** Why a record went to relay.dead; also the `reason` label of `relay_dead_letters_total`. */
export type DeadLetterReason = 'retries_exhausted' | 'destination_deleted' | 'malformed_record';

export const DEAD_REASON_HEADER = 'relay-dead-reason';
/** The topic a malformed record was read from (a job's own header names its destination otherwise). */
export const DEAD_ORIGIN_HEADER = 'relay-dead-origin';

/** The job as it would be retried (attempt number of its last try), body byte-exact, plus why it stopped. */
export function deadLetterOfJob(job: DeliveryJob, body: Buffer, reason: DeadLetterReason): OutgoingMessage {
  const message = encodeDeliveryJob(job, body);
  return { ...message, headers: { ...message.headers, [DEAD_REASON_HEADER]: reason } };
}

/** A record no one can read is kept as it was, so it can be inspected and repaired by hand. */
export function deadLetterOfRecord(record: BrokerRecord): OutgoingMessage {
  return {
    key: record.key,
    value: record.value,
    headers: { ...record.headers, [DEAD_REASON_HEADER]: 'malformed_record', [DEAD_ORIGIN_HEADER]: `${record.topic}/${record.partition}@${record.offset}` },
  };
}
