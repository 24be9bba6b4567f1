import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { Checkpointer, type WriterControl } from './wal-checkpointer.js';
import { waitFor } from '../testing/wait-for.js';

/** A database in WAL mode that never checkpoints itself, as the store's and the log's connections run. */
function walDatabase(dir: string, name: string): { file: string; db: Database.Database; append(rows: number): void } {
  const file = path.join(dir, name);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE rows (body TEXT)');
  const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
  return { file, db, append: (rows) => db.transaction(() => Array.from({ length: rows }, () => insert.run('x'.repeat(3000))))() };
}

/** A writer that records when the checkpointer held and released it. */
function recordingWriter(): WriterControl & { holds: number; releasesAfterHold: number; held: boolean } {
  return {
    holds: 0,
    releasesAfterHold: 0,
    held: false,
    hold() {
      this.holds++;
      this.held = true;
    },
    release() {
      if (this.held) this.releasesAfterHold++;
      this.held = false;
    },
  };
}

const walFrames = (db: Database.Database) => (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;

describe('WAL checkpointer', () => {
  let dir: string;
  const opened: Database.Database[] = [];
  const running: Checkpointer[] = [];
  const errors: Error[] = [];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-checkpointer-'));
    errors.length = 0;
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((checkpointer) => checkpointer.stop()));
    for (const db of opened.splice(0)) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const start = (name: string) => {
    const database = walDatabase(dir, name);
    opened.push(database.db);
    const writer = recordingWriter();
    const checkpointer = Checkpointer.start({ file: database.file, synchronous: 'NORMAL', intervalMs: 10, restartFrames: 8 }, writer, (error) => errors.push(error));
    running.push(checkpointer);
    return { ...database, writer, checkpointer };
  };

  it('copies back the WAL of every file a thread opens from one thread, and has each writer hold for the WAL to start over', async function () {
    if (!fs.existsSync('/proc/self/task')) this.skip(); // the thread count is read from Linux's /proc
    const threads = () => fs.readdirSync('/proc/self/task').length;
    const before = threads();
    const files = [start('a.sqlite'), start('b.sqlite'), start('c.sqlite')];
    // At most one: a thread of an earlier test may end meanwhile.
    expect(threads() - before).to.be.at.most(1);
    for (const file of files) file.append(20);
    for (const file of files) {
      await waitFor(`${path.basename(file.file)}'s writer held and released`, () => file.writer.releasesAfterHold, (count) => count > 0);
      // Held and released: the next commit rewinds the WAL to its start.
      file.append(1);
      expect(walFrames(file.db)).to.be.below(8);
    }
    expect(errors).to.deep.equal([]);
  });

  it('goes on with the other files when one stops, and serves files started after the last one stopped', async () => {
    start('first.sqlite');
    const second = start('second.sqlite');
    await running.shift()!.stop();
    second.append(20);
    await waitFor('the second writer held and released', () => second.writer.releasesAfterHold, (count) => count > 0);

    await running.shift()!.stop();
    const later = start('later.sqlite');
    later.append(20);
    await waitFor('the writer of a file started after the others stopped held and released', () => later.writer.releasesAfterHold, (count) => count > 0);
    expect(errors).to.deep.equal([]);
  });

  it('tells of a file it cannot open and still stops', async () => {
    const writer = recordingWriter();
    const checkpointer = Checkpointer.start({ file: path.join(dir, 'missing', 'gone.sqlite'), synchronous: 'NORMAL' }, writer, (error) => errors.push(error));
    await waitFor('the failed open reported', () => errors.length, (count) => count > 0);
    expect(errors[0]!.message).to.contain('gone.sqlite');
    await checkpointer.stop();
  });
});
