import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { DEAD_LETTER_TOPIC } from './delivery-job.js';
import { MalformedRecordError } from './malformed-record-error.js';

/**
 * Decodes every record; one that cannot be decoded goes to `relay.dead` (with where it came from and
 * why) instead of blocking its partition forever. Other errors propagate: the batch is retried.
 */
export async function decodeRecords<T>(
  records: BrokerRecord[],
  decode: (record: BrokerRecord) => T,
  publish: (topic: string, messages: OutgoingMessage[]) => Promise<void>,
): Promise<T[]> {
  const decoded: T[] = [];
  const dead: OutgoingMessage[] = [];
  for (const record of records) {
    try {
      decoded.push(decode(record));
    } catch (error) {
      if (!(error instanceof MalformedRecordError)) throw error;
      dead.push({
        key: record.key,
        value: record.value,
        headers: { ...record.headers, 'relay-dead-reason': error.message, 'relay-dead-from': `${record.topic}/${record.partition}@${record.offset}` },
      });
    }
  }
  if (dead.length > 0) await publish(DEAD_LETTER_TOPIC, dead);
  return decoded;
}
