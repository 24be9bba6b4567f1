import { tickBatcher, type TickBatched } from '../concurrency/tick-batcher.js';
import type { SqlClient } from './sql-client.js';

/**
 * Batches calls into a store the way its database takes them best. SQLite: the calls of one event-loop
 * turn, each turn's batch at once (one connection, so batches take turns on it anyway). PostgreSQL: one
 * batch at a time, carrying every call made while the previous one ran: each batch is a round trip and a
 * commit whatever its size, so a busy caller sends few (docs/decisions/0019-router-and-recorder-batches.md).
 */
export function storeBatcher<I, O>(sql: Pick<SqlClient, 'kind'>, runBatch: (items: I[]) => Promise<O[]>): TickBatched<I, O> {
  return tickBatcher(runBatch, { serial: sql.kind !== 'sqlite' });
}
