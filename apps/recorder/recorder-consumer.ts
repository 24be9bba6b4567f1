import type { Broker } from '../../libs/broker/broker.js';
import { ATTEMPTS_TOPIC, decodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { decodeRecords } from '../../libs/pipeline/decode-records.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { tickBatcher } from '../../libs/store/tick-batcher.js';
import { recordAttempts } from './record-attempts.js';

export const RECORDER_GROUP = 'relay-recorder';

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
export function createRecorderConsumer(broker: Broker, sql: SqlClient) {
  const producer = broker.producer();
  const write = attemptWriter(sql);
  return broker.consumer({
    groupId: RECORDER_GROUP,
    topics: [ATTEMPTS_TOPIC],
    fromBeginning: true,
    maxBatchSize: 1000,
    concurrency: 4,
    handleBatch: async (batch) => {
      const attempts = await decodeRecords(batch.records, decodeAttemptRecord, (topic, messages) => producer.send(topic, messages));
      if (attempts.length > 0) await write(attempts);
    },
  });
}
