import { expect } from 'chai';
import { createRelayTracer } from '../../libs/tracing/relay-tracer.js';
import type { BrokerRecord } from '../../libs/broker/broker.js';
import { newId } from '../../libs/ids/ids.js';
import { createPendingDeliveries } from '../../libs/ledger/deliveries.js';
import { encodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { ATTEMPTS_TOPIC } from '../../libs/pipeline/topology.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { FIRST_ROUND_SHARE } from '../../libs/pipeline/fair-rounds.js';
import { insertEventRow, openStoreFixture, sourceRow, type StoreFixture } from '../../libs/testing/store-fixtures.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { createAttemptsHandler } from './recorder-consumer.js';

const tracer = createRelayTracer({ serviceName: 'recorder-consumer-spec', sampleRatio: 1 });

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
  async function deliveredAttempt(of = { orgId: fixture.org.id, sourceId }): Promise<BrokerRecord> {
    const sql = fixture.store.sql;
    const { orgId } = of;
    const eventId = await insertEventRow(sql, orgId, of.sourceId, '{}');
    const [created] = await createPendingDeliveries(sql, [{ orgId, eventId, targets: [{ destinationId, destinationName: 'Sink' }] }], 0);
    const delivery = created![0]!;
    const attempt: AttemptRecord = {
      attemptId: newId('att'),
      deliveryId: delivery.id,
      eventId,
      orgId,
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
    }, tracer);
    const batches = await Promise.all([0, 1, 2, 3].map(async (partition) => ({ topic: ATTEMPTS_TOPIC, partition, records: [await deliveredAttempt(), await deliveredAttempt()] })));
    await Promise.all(batches.map((batch) => handle(batch)));
    expect(transactions).to.equal(1);
    const [delivered] = await sql.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'delivered'");
    expect(Number(delivered!.n)).to.equal(8);
  });

  it("writes another organization's few attempts in the batch's first transaction, before the rest of one organization's many", async () => {
    const sql = fixture.store.sql;
    const other = await fixture.store.organizations.create(`other-${newId('org').slice(-8)}`, 'pro');
    const otherSource = await fixture.store.sources.insert(sourceRow(other.id));
    const deliveredAfterEach: string[][] = [];
    const observing: SqlClient = Object.assign(Object.create(sql) as SqlClient, {
      transaction: async <T>(work: (tx: SqlClient) => Promise<T>) => {
        const result = await sql.transaction(work);
        const rows = await sql.all<{ event_id: string }>("SELECT event_id FROM deliveries WHERE status = 'delivered'");
        deliveredAfterEach.push(rows.map((row) => row.event_id));
        return result;
      },
    });
    const handle = createAttemptsHandler(observing, async () => {
      throw new Error('nothing here should be dead-lettered');
    }, tracer);
    const many = [];
    for (let i = 0; i < 3 * FIRST_ROUND_SHARE; i += 1) many.push(await deliveredAttempt());
    const few = await deliveredAttempt({ orgId: other.id, sourceId: otherSource.id });
    await handle({ topic: ATTEMPTS_TOPIC, partition: 0, records: [...many, few] });
    const fewEventId = (JSON.parse(few.value.toString()) as AttemptRecord).eventId;
    expect(deliveredAfterEach[0]).to.include(fewEventId).and.to.have.length(FIRST_ROUND_SHARE + 1);
    expect(deliveredAfterEach.at(-1)).to.have.length(many.length + 1);
  });
});
