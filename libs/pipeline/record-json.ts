import type { BrokerRecord } from '../broker/broker.js';
import { MalformedRecordError } from './malformed-record-error.js';

/** The type each named field of a decoded record must have; `?` allows null too. */
export type FieldTypes = Record<string, 'string' | 'number' | 'boolean' | 'object' | 'string?' | 'number?'>;

function typeOk(value: unknown, type: FieldTypes[string]): boolean {
  if (type.endsWith('?') && value === null) return true;
  const base = type.replace('?', '');
  if (base === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  if (base === 'number') return typeof value === 'number' && Number.isFinite(value);
  return typeof value === base;
}

/**
 * JSON text of a record, checked against the fields its consumers read: a record of the wrong shape is
 * malformed here rather than a TypeError deep in a handler (which would look like any other failure).
 */
function parse<T>(record: BrokerRecord, text: string, what: string, fields: FieldTypes): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedRecordError(record, `${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MalformedRecordError(record, `${what} is not a JSON object`);
  for (const [field, type] of Object.entries(fields)) {
    if (!typeOk((value as Record<string, unknown>)[field], type)) throw new MalformedRecordError(record, `${what}.${field} is not a ${type.replace('?', ' or null')}`);
  }
  return value as T;
}

/** The JSON carried in one record header (metadata beside a byte-exact body). */
export function jsonHeader<T>(record: BrokerRecord, header: string, fields: FieldTypes): T {
  const raw = record.headers[header];
  if (raw === undefined) throw new MalformedRecordError(record, `no ${header} header`);
  return parse<T>(record, raw, header, fields);
}

/** A record whose whole value is JSON. */
export function jsonValue<T>(record: BrokerRecord, what: string, fields: FieldTypes): T {
  return parse<T>(record, record.value.toString('utf8'), what, fields);
}
