import type { BrokerRecord } from '../broker/broker.js';
import { MalformedRecordError } from './malformed-record-error.js';

function parse<T>(record: BrokerRecord, text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new MalformedRecordError(record, `${what} is not JSON`);
  }
}

/** The JSON carried in one record header (metadata beside a byte-exact body). */
export function jsonHeader<T>(record: BrokerRecord, header: string): T {
  const raw = record.headers[header];
  if (raw === undefined) throw new MalformedRecordError(record, `no ${header} header`);
  return parse<T>(record, raw, header);
}

/** A record whose whole value is JSON. */
export function jsonValue<T>(record: BrokerRecord, what: string): T {
  return parse<T>(record, record.value.toString('utf8'), what);
}
