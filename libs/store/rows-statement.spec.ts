import { expect } from 'chai';
import { describeEachStore } from '../testing/store-targets.js';
import { allForRows, runForRows } from './rows-statement.js';
import type { SqlClient } from './sql-client.js';
import { openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';

describeEachStore('runForRows and allForRows', (target) => {
  let fixture: StoreFixture;
  let sql: SqlClient;
  const insert = { head: 'INSERT INTO rate_windows (bucket, window_start, hits)', row: '(?, ?, 1)', tail: 'ON CONFLICT (bucket, window_start) DO NOTHING' };
  const rows = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [`bucket-${from + i}`, 0]);
  const stored = async () => (await sql.all<{ bucket: string }>('SELECT bucket FROM rate_windows ORDER BY bucket')).map((row) => row.bucket);

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sql = fixture.store.sql;
  });

  afterEach(async () => {
    await fixture?.close();
  });

  it('inserts a batch of any size and counts the rows', async () => {
    expect(await runForRows(sql, insert, rows(0, 85))).to.equal(85);
    expect(await stored()).to.have.length(85);
    expect(await runForRows(sql, insert, [])).to.equal(0);
  });

  it('splits a batch past the bind parameters PostgreSQL takes in one statement (65,535)', async () => {
    // Two values a row: 32,767 rows fit in one statement, so this batch takes two there.
    expect(await runForRows(sql, insert, rows(0, 40_000))).to.equal(40_000);
    expect(await stored()).to.have.length(40_000);
  });

  it('returns only the rows a conflict did not skip, including a repeat within the batch', async () => {
    await runForRows(sql, insert, rows(0, 3));
    const batch = [...rows(2, 5), ['bucket-4', 0]];
    const returned = await allForRows<{ bucket: string }>(sql, { ...insert, tail: `${insert.tail} RETURNING bucket` }, batch);
    expect(returned.map((row) => row.bucket).sort()).to.deep.equal(['bucket-3', 'bucket-4']);
    expect(await stored()).to.deep.equal(['bucket-0', 'bucket-1', 'bucket-2', 'bucket-3', 'bucket-4']);
  });
});
