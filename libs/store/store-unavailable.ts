import Database from 'better-sqlite3';
import pg from 'pg';
import { UnavailableError } from '../errors/errors.js';

/**
 * SQLSTATE classes of a server that cannot serve now, whatever the statement: connection exceptions,
 * transaction rollbacks (serialization, deadlock), insufficient resources, operator intervention (shutdown),
 * system errors.
 */
const PG_UNAVAILABLE_CLASSES = new Set(['08', '40', '53', '57', '58']);
/** SQLite result codes of a database that cannot serve now (locked, disk full or failing, unopenable). */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|NOMEM|READONLY|PROTOCOL)/;

/**
 * The store's failures split by class: the database being unreachable or unable to serve is an
 * UnavailableError (retriable: the work is tried again later), a statement the database refused (a
 * constraint, a type) stays as the driver raised it. With PostgreSQL, every error that is not the
 * server's answer to a statement (`DatabaseError`) is the connection's.
 */
export function classifyStoreError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError) {
    return PG_UNAVAILABLE_CLASSES.has((error.code ?? '').slice(0, 2)) ? new UnavailableError(`The database cannot serve now: ${error.message}`, error) : error;
  }
  if (error instanceof Database.SqliteError) {
    return SQLITE_UNAVAILABLE.test(error.code) ? new UnavailableError(`The database cannot serve now: ${error.message}`, error) : error;
  }
  return error;
}

/** For PostgreSQL, where anything but a DatabaseError comes from the connection (refused, reset, pool timeout). */
export function classifyPostgresError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError) return classifyStoreError(error);
  if (error instanceof Error && !(error instanceof TypeError) && !(error instanceof RangeError)) {
    return new UnavailableError(`The database cannot be reached: ${error.message}`, error);
  }
  return error;
}
