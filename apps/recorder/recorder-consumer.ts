import type { Broker } from '../../libs/broker/broker.js';
import { decodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { deadLetterPoison, type DeadLetters } from '../../libs/pipeline/dead-letter.js';
import { handleIsolatingPoison, poisonReason } from '../../libs/pipeline/poison-records.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { tickBatcher } from '../../libs/concurrency/tick-batcher.js';
import { failUnrecordedAttempt, recordAttempts } from '../../libs/ledger/attempts.js';
import { ATTEMPTS_TOPIC, RECORDER_GROUP } from '../../libs/pipeline/topology.js';


/**
 * Writes one partition's attempts. On SQLite the batches of one event-loop turn share a transaction:
 * they would take turns on its one connection anyway, and a commit costs as much as writing several
 * attempts (with deliveries keeping up, a partition's batch holds only a few). On PostgreSQL each batch
 * keeps a transaction of its own, run beside the others.
 */
function attemptWriter(sql: SqlClient): (attempts: AttemptRecord[]) => Promise<void> {
  if (sql.kind !== 'sqlite') return (attempts) => recordAttempts(sql, attempts);
  return tickBatcher(async (batches: AttemptRecord[][]) => {
    await recordAttempts(sql, batches.flat());
    return batches.map(() => undefined);
  });
}

/** The recorder role: the only writer of delivery state, fed by `relay.attempts`. */
export function createRecorderConsumer(broker: Broker, sql: SqlClient, deadLetters: DeadLetters) {
  const write = attemptWriter(sql);
  return broker.consumer({
    groupId: RECORDER_GROUP,
    topics: [ATTEMPTS_TOPIC],
    fromBeginning: true,
    maxBatchSize: 1000,
    concurrency: 4,
    handleBatch: (batch) =>
      handleIsolatingPoison(batch.records, {
        all: (records) => write(records.map(decodeAttemptRecord)),
        // Alone means its own transaction, not one shared with other partitions' batches of the turn.
        one: (record) => recordAttempts(sql, [decodeAttemptRecord(record)]),
        deadLetter: (record, error) => deadLetterPoison(deadLetters, record, error),
        markEvent: (record, error) => failUnrecordedAttempt(sql, decodeAttemptRecord(record), poisonReason(error).detail),
      }),
  });
}
