import type { Broker } from '../../libs/broker/broker.js';
import { ATTEMPTS_TOPIC, decodeAttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { decodeRecords } from '../../libs/pipeline/decode-records.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { recordAttempts } from './record-attempts.js';

export const RECORDER_GROUP = 'relay-recorder';

/** The recorder role: the only writer of delivery state, fed by `relay.attempts`. */
export function createRecorderConsumer(broker: Broker, sql: SqlClient) {
  const producer = broker.producer();
  return broker.consumer({
    groupId: RECORDER_GROUP,
    topics: [ATTEMPTS_TOPIC],
    fromBeginning: true,
    maxBatchSize: 1000,
    concurrency: 4,
    handleBatch: async (batch) => {
      const attempts = await decodeRecords(batch.records, decodeAttemptRecord, (topic, messages) => producer.send(topic, messages));
      if (attempts.length > 0) await recordAttempts(sql, attempts);
    },
  });
}
