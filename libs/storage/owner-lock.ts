import Database from 'better-sqlite3';

/**
 * Keeps every other process (and every other holder in this one) away from a file while held: a small
 * SQLite file beside it, `<file>.lock`, written once under SQLite's exclusive locking mode, so its lock is
 * never given back until `release`, or until the process dies, when the OS drops it.
 */
export class OwnerLock {
  private constructor(private readonly db: Database.Database) {}

  /** The lock of `file`, or undefined while another holds it. */
  static tryAcquire(file: string): OwnerLock | undefined {
    const db = new Database(`${file}.lock`, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS owner (pid INTEGER NOT NULL, since INTEGER NOT NULL)');
      db.transaction(() => {
        db.exec('DELETE FROM owner');
        db.prepare('INSERT INTO owner (pid, since) VALUES (?, ?)').run(process.pid, Date.now());
      })();
      return new OwnerLock(db);
    } catch (error) {
      db.close();
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') return undefined;
      throw error;
    }
  }

  release(): void {
    this.db.close();
  }
}
