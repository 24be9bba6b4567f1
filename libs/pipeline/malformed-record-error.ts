import type { BrokerRecord } from '../broker/broker.js';
import { RelayError } from '../errors/errors.js';

/** A record no consumer can understand; retrying cannot help, so it is dead-lettered. */
export class MalformedRecordError extends RelayError {
  constructor(record: Pick<BrokerRecord, 'topic' | 'partition' | 'offset'>, reason: string) {
    super(500, 'MALFORMED_RECORD', `record ${record.topic}/${record.partition}@${record.offset}: ${reason}`);
  }
}
