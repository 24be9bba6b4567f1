import { expect } from 'chai';
import type { BrokerRecord } from '../../libs/broker/broker.js';
import { newId } from '../../libs/ids/ids.js';
import { createPendingDeliveries } from '../../libs/ledger/deliveries.js';
import { encodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { ATTEMPTS_TOPIC } from '../../libs/pipeline/topology.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { insertEventRow, openStoreFixture, type StoreFixture } from '../../libs/testing/store-fixtures.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { createAttemptsHandler } from './recorder-consumer.js';

describeEachStore('the recorder', (target) => {
  let fixture: StoreFixture;
  let sourceId: string;
  const destinationId = newId('dst');

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sourceId = (await fixture.createSource()).id;
  });

  afterEach(async () => {
    await fixture?.close();
  });

  /** A record of relay.attempts: the first attempt, delivered, of a new event's one pending delivery. */
  async function deliveredAttempt(): Promise<BrokerRecord> {
    const sql = fixture.store.sql;
    const eventId = await insertEventRow(sql, fixture.org.id, sourceId, '{}');
    const [created] = await createPendingDeliveries(sql, [{ orgId: fixture.org.id, eventId, targets: [{ destinationId, destinationName: 'Sink' }] }], 0);
    const delivery = created![0]!;
    const attempt: AttemptRecord = {
      attemptId: newId('att'),
      deliveryId: delivery.id,
      eventId,
      orgId: fixture.org.id,
      destinationId,
      attemptNumber: 1,
      startedAt: 1_700_000_000_000,
      completedAt: 1_700_000_000_040,
      ok: true,
      statusCode: 200,
      latencyMs: 40,
      error: null,
      errorKind: null,
      responseBody: '',
      deliveryStatus: 'delivered',
      nextAttemptAt: null,
    };
    const message = encodeAttemptRecord(attempt);
    return { topic: ATTEMPTS_TOPIC, partition: 0, offset: '0', timestamp: attempt.completedAt, key: message.key, value: message.value, headers: message.headers ?? {} };
  }

  it('writes the batches of partitions handled at the same time in one transaction', async () => {
    const sql = fixture.store.sql;
    let transactions = 0;
    const counting: SqlClient = Object.assign(Object.create(sql) as SqlClient, {
      transaction: <T>(work: (tx: SqlClient) => Promise<T>) => {
        transactions += 1;
        return sql.transaction(work);
      },
    });
    const handle = createAttemptsHandler(counting, async () => {
      throw new Error('nothing here should be dead-lettered');
    });
    const batches = await Promise.all([0, 1, 2, 3].map(async (partition) => ({ topic: ATTEMPTS_TOPIC, partition, records: [await deliveredAttempt(), await deliveredAttempt()] })));
    await Promise.all(batches.map((batch) => handle(batch)));
    expect(transactions).to.equal(1);
    const [delivered] = await sql.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'delivered'");
    expect(Number(delivered!.n)).to.equal(8);
  });
});
