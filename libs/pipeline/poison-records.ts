import type { BrokerRecord } from '../broker/broker.js';
import { RelayError } from '../errors/errors.js';
import { MalformedRecordError } from './malformed-record-error.js';

/**
 * A failure of something the consumer depends on (store, broker unreachable): retrying the same record
 * later can succeed, so the batch is retried with back-off and holds its partition. Those errors are
 * retriable RelayErrors (the store and broker adapters raise them). Anything else that a record causes
 * when handled alone is a property of the record: it would fail the same way forever.
 */
export function isDependencyFailure(error: unknown): boolean {
  return error instanceof RelayError && error.retriable;
}

/** How a poison record is described in relay.dead, and on its event. */
export function poisonReason(error: unknown): { kind: 'malformed_record' | 'poison_record'; detail: string } {
  const kind = error instanceof MalformedRecordError ? 'malformed_record' : 'poison_record';
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { kind, detail };
}

export interface PoisonIsolation {
  /** Handles a whole batch (the fast path). */
  all(records: BrokerRecord[]): Promise<void>;
  /** Handles one record on its own, sharing nothing with other records' work. */
  one(record: BrokerRecord): Promise<void>;
  /** Sends a record that failed alone, for a reason of its own, to relay.dead (createDeadLetters). */
  deadLetter(record: BrokerRecord, error: unknown): Promise<void>;
  /**
   * Then marks its event `failed` with the reason, where there is one. A record that cannot even be read
   * for that (malformed) or whose event cannot be written makes this fail: the dead letter keeps it.
   */
  markEvent?(record: BrokerRecord, error: unknown): Promise<void>;
}

/**
 * Handles a batch so that no record can stall its partition. When the batch fails for any reason but a
 * dependency, its records are handled again one at a time (the handlers are idempotent on ids, so what
 * the failed attempt did is not done twice), and a record that fails on its own is dead-lettered and its
 * event marked; the others go on. A dependency failure propagates at any point: the consumer retries the batch.
 */
export async function handleIsolatingPoison(records: BrokerRecord[], isolation: PoisonIsolation): Promise<void> {
  if (records.length === 0) return;
  try {
    await isolation.all(records);
    return;
  } catch (error) {
    if (isDependencyFailure(error)) throw error;
  }
  for (const record of records) {
    try {
      await isolation.one(record);
    } catch (error) {
      if (isDependencyFailure(error)) throw error;
      await isolation.deadLetter(record, error);
      // Awaited in a try: a marker may throw before it returns a promise (decoding the record it cannot read).
      try {
        await isolation.markEvent?.(record, error);
      } catch (markError) {
        if (isDependencyFailure(markError)) throw markError;
      }
    }
  }
}
