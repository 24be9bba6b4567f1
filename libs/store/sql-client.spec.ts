import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../testing/wait-for.js';
import { openSqlClient, type SqlClient } from './sql-client.js';

describe('SQL client on SQLite', () => {
  let dataDir: string;
  let sql: SqlClient;

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sql-client-'));
    sql = openSqlClient({ dataDir });
  });

  afterEach(async () => {
    await sql.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies the WAL back into the database file on its own while the connection stays open', async () => {
    await sql.run('CREATE TABLE rows (id INTEGER PRIMARY KEY, value BLOB NOT NULL)');
    const value = Buffer.alloc(1024, 7);
    for (let batch = 0; batch < 20; batch++) {
      await sql.transaction(async (tx) => {
        for (let n = 0; n < 100; n++) await tx.run('INSERT INTO rows (value) VALUES (?)', [value]);
      });
    }
    // Commits do not checkpoint (that would stall the event loop): the file only grows by the checkpointer.
    const fileBytes = () => fs.statSync(path.join(dataDir, 'relay.sqlite')).size;
    await waitFor('the checkpointer to copy 2,000 rows of 1 KB back', async () => fileBytes(), (bytes) => bytes > 2_000_000, 5_000);
    const [row] = await sql.all<{ count: number }>('SELECT COUNT(*) AS count FROM rows');
    expect(row!.count).to.equal(2_000);
  });
});
