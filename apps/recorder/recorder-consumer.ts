import type { Broker, RecordBatch } from '../../libs/broker/broker.js';
import { tracedRecords } from '../../libs/tracing/record-trace.js';
import type { RelayTracer } from '../../libs/tracing/relay-tracer.js';
import { decodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { deadLetterPoison, type DeadLetters } from '../../libs/pipeline/dead-letter.js';
import { decodedRounds } from '../../libs/pipeline/fair-rounds.js';
import { handleIsolatingPoison, poisonReason } from '../../libs/pipeline/poison-records.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { storeBatcher } from '../../libs/store/store-batcher.js';
import { failUnrecordedAttempt, recordAttempts } from '../../libs/ledger/attempts.js';
import type { DisabledDestination } from '../../libs/issues/attempt-issues.js';
import { ATTEMPTS_TOPIC, RECORDER_GROUP } from '../../libs/pipeline/topology.js';


/**
 * Writes one partition's attempts; the batches of several partitions share a transaction (storeBatcher).
 * Each transaction is seven statements and a commit whatever its size, and on Kafka a partition's batch
 * holds a few attempts, so one transaction per batch cost more in statements than its writes
 * (docs/decisions/0019-router-and-recorder-batches.md). Rows are locked in id order inside, so recorders of other
 * processes still never deadlock.
 */
function attemptWriter(sql: SqlClient, onDisabled: OnDisabled): (attempts: AttemptRecord[]) => Promise<void> {
  return storeBatcher(sql, async (batches: AttemptRecord[][]) => {
    await onDisabled(await recordAttempts(sql, batches.flat()));
    return batches.map(() => undefined);
  });
}

/**
 * Told of the destinations a batch disabled (auto-disable), once it is committed: the composition root
 * announces them, so deliverers hold their jobs and API views show them disabled.
 */
export type OnDisabled = (destinations: DisabledDestination[]) => Promise<void>;

/**
 * The handler of `relay.attempts`: each batch's attempts written round after round of the organizations'
 * records in turn (fair-rounds.ts), so one organization's many attempts do not hold up another's; a record
 * that fails on its own set aside.
 */
export function createAttemptsHandler(sql: SqlClient, deadLetters: DeadLetters, tracer: RelayTracer, onDisabled: OnDisabled = async () => {}): (batch: RecordBatch) => Promise<void> {
  const write = attemptWriter(sql, onDisabled);
  return async (batch) => {
    const { rounds, decoded } = decodedRounds(batch.records, decodeAttemptRecord, (attempt) => attempt.orgId);
    for (const round of rounds) {
      await handleIsolatingPoison(round, {
        all: (records) => tracedRecords(tracer, 'record attempt', records, () => write(records.map(decoded))),
        // Alone means its own transaction, not one shared with other partitions' batches.
        one: async (record) => onDisabled(await recordAttempts(sql, [decoded(record)])),
        deadLetter: (record, error) => deadLetterPoison(deadLetters, record, error),
        markEvent: (record, error) => failUnrecordedAttempt(sql, decoded(record), poisonReason(error).detail),
      });
    }
  };
}

/** The recorder role: the only writer of delivery state, fed by `relay.attempts`. */
export function createRecorderConsumer(broker: Broker, sql: SqlClient, deadLetters: DeadLetters, tracer: RelayTracer, onDisabled: OnDisabled) {
  return broker.consumer({
    groupId: RECORDER_GROUP,
    topics: [ATTEMPTS_TOPIC],
    fromBeginning: true,
    maxBatchSize: 1000,
    concurrency: 4,
    handleBatch: createAttemptsHandler(sql, deadLetters, tracer, onDisabled),
  });
}
