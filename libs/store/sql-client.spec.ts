import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../testing/wait-for.js';
import { metAnotherConnection, openSqlClient, type SqlClient } from './sql-client.js';

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

  it("waits for another connection's write transaction without holding its event loop, then writes", async () => {
    await sql.run('CREATE TABLE rows (id INTEGER PRIMARY KEY)');
    const other = openSqlClient({ dataDir });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      // The other connection (another thread's, in a relay on pipeline threads) holds the write lock until told.
      const otherWrite = other.transaction(async (tx) => {
        await tx.run('INSERT INTO rows (id) VALUES (1)');
        holding();
        await released;
      });
      await held;
      let write: 'waiting' | 'done' = 'waiting';
      const ownWrite = sql.run('INSERT INTO rows (id) VALUES (2)').then(() => (write = 'done'));
      // The event loop turns while the write waits (SQLite's busy handler would hold it still until its timeout).
      await new Promise((resolve) => setImmediate(resolve));
      expect(write).to.equal('waiting');
      release();
      await Promise.all([otherWrite, ownWrite]);
      expect(await sql.all('SELECT id FROM rows ORDER BY id')).to.deep.equal([{ id: 1 }, { id: 2 }]);
    } finally {
      await other.close();
    }
  });

  it("keeps a statement's rollback pages in memory: a batch inside a transaction opens no temporary file", async () => {
    await sql.run('CREATE TABLE rows (id INTEGER PRIMARY KEY, value BLOB NOT NULL)');
    await sql.transaction(async (tx) => {
      for (let n = 0; n < 200; n++) await tx.run('INSERT INTO rows (value) VALUES (?)', [Buffer.alloc(1024, 1)]);
    });
    // SQLite unlinks its temporary files as it opens them; only the process's open descriptors show them.
    const openTarget = (fd: string) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return ''; // closed since the directory was read (readdir's own descriptor)
      }
    };
    const temporaryFiles = () => fs.readdirSync('/proc/self/fd').map(openTarget).filter((target) => target.includes('etilqs_'));
    const opened = await sql.transaction(async (tx) => {
      // About 50 pages changed by one statement: past the 64 KiB SQLite keeps in memory by default.
      await tx.run('UPDATE rows SET value = ?', [Buffer.alloc(1024, 2)]);
      return temporaryFiles();
    });
    expect(opened).to.deep.equal([]);
    expect(await sql.all('SELECT COUNT(*) AS count FROM rows WHERE value = ?', [Buffer.alloc(1024, 2)])).to.deep.equal([{ count: 200 }]);
  });

  it('waits out the codes of another connection at work, and fails at once on any other', () => {
    expect(['SQLITE_BUSY', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_SNAPSHOT'].filter(metAnotherConnection)).to.have.length(3);
    expect(['SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_CONSTRAINT', undefined].filter(metAnotherConnection)).to.deep.equal([]);
  });
});
