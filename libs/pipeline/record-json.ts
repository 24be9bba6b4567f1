import type { z } from 'zod';
import type { BrokerRecord } from '../broker/broker.js';
import { MalformedRecordError } from './malformed-record-error.js';

/**
 * JSON text of a record, checked against its message's schema: a record of the wrong shape is malformed
 * here, naming the first bad field, rather than a TypeError deep in a handler (which would look like any
 * other failure). Fields a newer version added are tolerated: a plain `z.object` drops them, which is
 * fine for a message that is only read; one that is published again decodes loose (delivery-job.ts).
 */
function parse<Schema extends z.ZodType>(record: BrokerRecord, text: string, what: string, schema: Schema): z.output<Schema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedRecordError(record, `${what} is not JSON`);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new MalformedRecordError(record, `${[what, ...issue.path.map(String)].join('.')}: ${issue.message}`);
}

/** The JSON carried in one record header (metadata beside a byte-exact body). */
export function jsonHeader<Schema extends z.ZodType>(record: BrokerRecord, header: string, schema: Schema): z.output<Schema> {
  const raw = record.headers[header];
  if (raw === undefined) throw new MalformedRecordError(record, `no ${header} header`);
  return parse(record, raw, header, schema);
}

/** A record whose whole value is JSON. */
export function jsonValue<Schema extends z.ZodType>(record: BrokerRecord, what: string, schema: Schema): z.output<Schema> {
  return parse(record, record.value.toString('utf8'), what, schema);
}
