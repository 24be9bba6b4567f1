import type { BrokerRecord, OutgoingMessage } from '../broker/broker.js';
import { endFailed, parentContext, TRACEPARENT_HEADER, traceparentOf, type RelayTracer, type Span } from './relay-tracer.js';

/**
 * The trace context travels in every pipeline record's `traceparent` header (both brokers carry
 * headers), beside the message's own header, so each hop's span is a child of the one before it.
 */
export function withTraceparent(message: OutgoingMessage, span: Span): OutgoingMessage {
  const traceparent = traceparentOf(span);
  return traceparent === undefined ? message : { ...message, headers: { ...message.headers, [TRACEPARENT_HEADER]: traceparent } };
}

/** The record's `traceparent`, when it has one (records of older relays do not). */
export function recordTraceparent(record: BrokerRecord): string | undefined {
  return record.headers[TRACEPARENT_HEADER];
}

/** The trace id of the record's context, when it carries a valid one. */
export function recordTraceId(record: BrokerRecord): string | undefined {
  return parentContext(recordTraceparent(record))?.traceId;
}

/** Runs `work` for `records` under one span per record, each a child of the record's context. */
export async function tracedRecords<T>(tracer: RelayTracer, name: string, records: readonly BrokerRecord[], work: () => Promise<T>): Promise<T> {
  const spans = records.map((record) => tracer.start(name, recordTraceparent(record)));
  try {
    const result = await work();
    for (const span of spans) span.end();
    return result;
  } catch (error) {
    for (const span of spans) endFailed(span, error);
    throw error;
  }
}

/** The trace and span ids a log line about this record carries (none for records of older relays). */
export function recordLogFields(record: BrokerRecord): { traceId?: string; spanId?: string } {
  const context = parentContext(recordTraceparent(record));
  return context ? { traceId: context.traceId, spanId: context.spanId } : {};
}
