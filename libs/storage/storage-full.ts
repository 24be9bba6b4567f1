import Database from 'better-sqlite3';

/** How deep a chain of wrapping errors (`cause`, TypeORM's `driverError`) is followed. */
const MAX_DEPTH = 5;

/**
 * Whether a failure, or one it wraps, is a full disk: SQLite's SQLITE_FULL (better-sqlite3) or a file
 * write's ENOSPC. Classified by code, never by message.
 */
export function isStorageFull(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_DEPTH && current instanceof Error; depth++) {
    if (current instanceof Database.SqliteError && current.code === 'SQLITE_FULL') return true;
    if ((current as NodeJS.ErrnoException).code === 'ENOSPC') return true;
    current = (current as { driverError?: unknown }).driverError ?? current.cause;
  }
  return false;
}
