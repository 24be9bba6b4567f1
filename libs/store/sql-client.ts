import Database from 'better-sqlite3';
import path from 'node:path';
import pg from 'pg';
import { Checkpointer } from '../sqlite/wal-checkpointer.js';
import { backoffDelay, type BackoffOptions } from '../time/backoff.js';
import { createMutex, mutexHold } from './connection-mutex.js';
import { classifyPostgresError, classifyStoreError } from './store-unavailable.js';
import type { DatabaseKind } from './data-source.js';

/**
 * A thin SQL client for the hot paths (ingest dedup and rate windows, pipeline batches), beside the ORM.
 * Statements use `?` placeholders on both databases. Its own connection(s): a transaction here never
 * shares a connection with an ORM transaction.
 */
export interface SqlClient {
  kind: DatabaseKind;
  /** A boolean as this database takes it as a parameter (SQLite has no boolean type). */
  bool(value: boolean): boolean | number;
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a statement and returns the number of rows it changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
  transaction<T>(work: (tx: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const toPgPlaceholders = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** How long a write waits for another connection's write transaction (another thread's) to end. */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;
/** Short waits: the other thread's write transactions last milliseconds. */
const LOCKED_WRITE_BACKOFF: BackoffOptions = { initialMs: 1, maxMs: 16 };

/**
 * SQLite's codes for a statement that met another connection at work and may go once it is done: its write
 * lock (SQLITE_BUSY), its rebuilding of the WAL index (SQLITE_BUSY_RECOVERY: met at a relay's start, on the
 * dedup journal's new file, which then failed to open), or its commit since this statement's snapshot
 * (SQLITE_BUSY_SNAPSHOT).
 */
export const metAnotherConnection = (code: unknown) => typeof code === 'string' && /^SQLITE_BUSY(_RECOVERY|_SNAPSHOT)?$/.test(code);

/**
 * Runs `attempt` until it no longer meets another connection's write lock, waiting between tries on a timer.
 * SQLite's own busy handler would sleep inside the call, holding this thread's event loop still while a
 * pipeline thread commits: ingest answers and the broker's port would wait behind it.
 */
async function whenUnlocked<T>(attempt: () => T): Promise<T> {
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (let failures = 1; ; failures++) {
    try {
      return attempt();
    } catch (error) {
      if (!metAnotherConnection((error as { code?: unknown }).code) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(LOCKED_WRITE_BACKOFF, failures)));
    }
  }
}

function sqliteClient(file: string, onBackgroundError: (error: Error) => void, checkpoints: boolean): SqlClient {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Waits for locks are whenUnlocked's, off the event loop.
  db.pragma('busy_timeout = 0');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Checkpoints run on a thread of their own (below): in a commit they would stall the event loop.
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('journal_size_limit = 67108864');
  // A statement inside a transaction keeps the pages it changes for its own rollback; past 64 KiB SQLite moves
  // them to a temporary file, two more system calls a page (the pipeline's batches did, about two an event).
  // The statements here are bounded batches, so they stay in memory.
  db.pragma('temp_store = MEMORY');
  db.defaultSafeIntegers(false);
  // SQLite's LOWER folds ASCII letters only; searches fold all of Unicode, as PostgreSQL's ILIKE does.
  db.function('unicode_lower', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : text));
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const runStatement = (sql: string, params: unknown[] = []) => {
    const statement = prepared(sql);
    return statement.reader ? statement.all(...params).length : statement.run(...params).changes;
  };
  const direct: Omit<SqlClient, 'transaction' | 'close'> = {
    kind: 'sqlite',
    bool: (value) => (value ? 1 : 0),
    all: async <T>(sql: string, params: unknown[] = []) => prepared(sql).all(...params) as T[],
    run: async (sql, params = []) => runStatement(sql, params),
  };
  const exclusive = createMutex();
  const checkpointer = checkpoints ? Checkpointer.start({ file, synchronous: 'NORMAL' }, mutexHold(exclusive), onBackgroundError) : undefined;
  const inTransaction: SqlClient = {
    ...direct,
    transaction: (work) => work(inTransaction),
    close: async () => undefined,
  };
  return {
    ...direct,
    all: <T>(sql: string, params: unknown[] = []) => exclusive(() => whenUnlocked(() => prepared(sql).all(...params) as T[])),
    run: (sql, params) => exclusive(() => whenUnlocked(() => runStatement(sql, params))),
    transaction: (work) =>
      exclusive(async () => {
        await whenUnlocked(() => db.exec('BEGIN IMMEDIATE'));
        try {
          const result = await work(inTransaction);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: async () => {
      await checkpointer?.stop();
      db.close();
    },
  };
}

function postgresClient(url: string, onBackgroundError: (error: Error) => void): SqlClient {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server ends (restart, failover) is dropped from the pool and replaced on the
  // next query; without a listener its error would be uncaught and end the process.
  pool.on('error', (error) => onBackgroundError(error));
  // BIGINT arrives as text from pg; every BIGINT here is an epoch-ms or a count that fits a double.
  const types = { getTypeParser: (oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text')) };
  const on = (runner: pg.Pool | pg.PoolClient): Omit<SqlClient, 'transaction' | 'close'> => ({
    kind: 'postgres',
    bool: (value) => value,
    all: async <T>(sql: string, params: unknown[] = []) =>
      (await runner.query({ text: toPgPlaceholders(sql), values: params, types })).rows as T[],
    run: async (sql, params = []) => (await runner.query({ text: toPgPlaceholders(sql), values: params, types })).rowCount ?? 0,
  });
  return {
    ...on(pool),
    async transaction(work) {
      const client = await pool.connect();
      const tx: SqlClient = { ...on(client), transaction: (inner) => inner(tx), close: async () => undefined };
      try {
        await client.query('BEGIN');
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export interface SqlClientOptions {
  databaseUrl?: string;
  dataDir: string;
  /** Without `databaseUrl`, the SQLite file in `dataDir`: the store's `relay.sqlite` unless another is named. */
  sqliteFile?: string;
  /** Told about errors no query is waiting for: PostgreSQL idle connections, SQLite checkpoints. */
  onBackgroundError?: (error: Error) => void;
  /**
   * SQLite: whether this connection's thread checkpoints the file's WAL (the default). False only where
   * other connections of the process, open for as long as this one, do (the search indexer's thread: a
   * checkpoint thread of its own would be one more isolate copying the same WAL).
   */
  checkpoints?: boolean;
}

/** The client with its failures classified (store-unavailable.ts): an unreachable database is an UnavailableError. */
function classified(client: SqlClient, classify: (error: unknown) => unknown): SqlClient {
  const reclassify = (error: unknown): never => {
    throw classify(error);
  };
  return {
    ...client,
    all: <T>(sql: string, params?: unknown[]) => client.all<T>(sql, params).catch(reclassify),
    run: (sql, params) => client.run(sql, params).catch(reclassify),
    // What the work throws is its own (statements inside it are classified on `tx`); only BEGIN and
    // COMMIT failures are classified here.
    transaction: (work) => {
      let workFailed = false;
      return client
        .transaction((tx) =>
          work(classified(tx, classify)).catch((error: unknown) => {
            workFailed = true;
            throw error;
          }),
        )
        .catch((error: unknown) => {
          throw workFailed ? error : classify(error);
        });
    },
  };
}

export function openSqlClient(options: SqlClientOptions): SqlClient {
  const onBackgroundError = options.onBackgroundError ?? (() => undefined);
  if (!options.databaseUrl) {
    const file = path.join(options.dataDir, options.sqliteFile ?? 'relay.sqlite');
    return classified(sqliteClient(file, onBackgroundError, options.checkpoints ?? true), classifyStoreError);
  }
  return classified(postgresClient(options.databaseUrl, onBackgroundError), classifyPostgresError);
}
