import Database from 'better-sqlite3';
import { BrokerUnavailableError } from '../errors.js';

/**
 * Keeps every other process (and every other broker in this one) away from a log file while held: a small
 * SQLite file beside it, written once under SQLite's exclusive locking mode, so its lock is never given
 * back until `release` — or until the process dies, when the OS drops it.
 */
export class OwnerLock {
  private constructor(private readonly db: Database.Database) {}

  static acquire(file: string): OwnerLock {
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
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new BrokerUnavailableError(`The embedded log ${file} is in use by another process`, error);
      }
      throw error;
    }
  }

  release(): void {
    this.db.close();
  }
}
