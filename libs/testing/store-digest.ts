import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { SqlClient } from '../store/sql-client.js';

/**
 * Test support: whether anything the store holds changed between two moments. Tables are read whole
 * (every table, so tables added later are covered), with allowances that are not changes made by a
 * request: ingest rate windows (refused requests count towards the rate limit, docs/decisions/0026-client-address-public-url-check-order.md), event
 * counts (derived from `events` by triggers, which is compared; PostgreSQL folds their deltas in the
 * background), the search index (derived from `events`, filled behind the inserts by the router's indexer)
 * and the migrations' bookkeeping are not compared, and rows with an `expires_at` (dedup keys) may vanish
 * once expired, as their purge removes them, but never appear or change.
 */

const NOT_COMPARED = new Set([
  'migrations',
  'relay_migrations',
  'typeorm_metadata',
  'rate_windows',
  'event_counts',
  'search_index_state',
  'search_pending',
  'events_search',
  'search_chunks',
]);
/** Columns that reads update (a key's last use). */
const VOLATILE_COLUMNS = new Set(['last_used_at']);
/** Values past this length are compared by length and their two ends: payloads would make every check slow. */
const WHOLE_UP_TO = 256;

export interface StoreSnapshot {
  /**
   * Unchanged means nothing was committed since: SQLite's data_version on a connection of our own, or
   * PostgreSQL's WAL position (every change to a table writes WAL; a busy shared server just moves it more often).
   */
  version?: string;
  /** Every compared table without an expiry. */
  digest: string;
  /** Rows of tables with `expires_at`, canonical text to expiry (epoch ms). */
  expiring: Map<string, number>;
}

function canonicalValue(value: unknown): string {
  const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
  return text.length <= WHOLE_UP_TO ? text : `${text.length}:${text.slice(0, 100)}…${text.slice(-100)}`;
}

/** A table's columns come in the same order in every row the database returns. */
function canonicalRow(row: Record<string, unknown>): string {
  const values: string[] = [];
  for (const column in row) if (!VOLATILE_COLUMNS.has(column)) values.push(canonicalValue(row[column]));
  return JSON.stringify(values);
}

async function tableNames(sql: SqlClient): Promise<string[]> {
  const rows =
    sql.kind === 'postgres'
      ? await sql.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
      : // FTS5 tables and their shadows follow `events` through triggers.
        await sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'events_search%'");
  return rows.map((row) => row.name).filter((name) => !NOT_COMPARED.has(name)).sort();
}

/**
 * Watches the store of a relay. A version that tells at almost no cost that nothing was committed since a
 * snapshot lets most checks skip reading the tables; on SQLite it needs `dataDir`, to open a connection
 * of its own.
 */
export function watchStore(sql: SqlClient, dataDir?: string) {
  const probe = sql.kind === 'sqlite' && dataDir ? new Database(path.join(dataDir, 'relay.sqlite'), { readonly: true }) : undefined;
  async function version(): Promise<string | undefined> {
    if (probe) return String(probe.pragma('data_version', { simple: true }));
    if (sql.kind !== 'postgres') return undefined;
    const [row] = await sql.all<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    return row?.lsn;
  }

  /**
   * On PostgreSQL, the tables without an expiry are hashed by the server in one query (each row as JSON
   * without the volatile columns), rather than read row by row: a round trip per table made every check slow.
   */
  async function serverDigest(tables: string[]): Promise<string> {
    const volatile = [...VOLATILE_COLUMNS].map((column) => ` - '${column}'`).join('');
    const rowText = `md5((to_jsonb(x)${volatile})::text)`;
    const parts = tables.map(
      (table) => `SELECT '${table}' AS name, COUNT(*) AS n, md5(COALESCE(string_agg(${rowText}, '' ORDER BY ${rowText}), '')) AS h FROM ${table} x`,
    );
    const rows = await sql.all<{ name: string; n: number | string; h: string }>(parts.join(' UNION ALL '));
    return createHash('sha256').update(rows.map((row) => `${row.name}:${row.n}:${row.h}`).sort().join('\n')).digest('hex');
  }

  async function expiringTables(tables: string[]): Promise<Set<string>> {
    if (sql.kind !== 'postgres') return new Set();
    const rows = await sql.all<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'expires_at'",
    );
    return new Set(rows.map((row) => row.name).filter((name) => tables.includes(name)));
  }

  async function snapshot(): Promise<StoreSnapshot> {
    const at = await version();
    const tables = await tableNames(sql);
    const expiringOnly = await expiringTables(tables);
    const hash = createHash('sha256');
    const expiring = new Map<string, number>();
    if (sql.kind === 'postgres') hash.update(await serverDigest(tables.filter((table) => !expiringOnly.has(table))));
    for (const table of sql.kind === 'postgres' ? [...expiringOnly] : tables) {
      const rows = await sql.all<Record<string, unknown>>(`SELECT * FROM ${table}`);
      // An empty table adds nothing: rows appearing in it change the digest all the same.
      if (rows.length === 0) continue;
      if ('expires_at' in rows[0]!) {
        for (const row of rows) expiring.set(`${table}:${canonicalRow(row)}`, Number(row.expires_at));
        continue;
      }
      const lines = rows.map(canonicalRow).sort();
      hash.update(`${table}:${lines.length}\n${lines.join('\n')}\n`);
    }
    return { version: at, digest: hash.digest('hex'), expiring };
  }

  /** What changed since `since` (null if nothing), and the snapshot to compare with next. */
  async function changesSince(since: StoreSnapshot, now: number): Promise<{ change: string | null; snapshot: StoreSnapshot }> {
    if (since.version !== undefined && (await version()) === since.version) return { change: null, snapshot: since };
    const current = await snapshot();
    if (current.digest !== since.digest) return { change: 'a table changed', snapshot: current };
    for (const row of current.expiring.keys()) if (!since.expiring.has(row)) return { change: `a row appeared: ${row.slice(0, 200)}`, snapshot: current };
    for (const [row, expiresAt] of since.expiring) {
      if (!current.expiring.has(row) && expiresAt > now) return { change: `a row vanished before its expiry: ${row.slice(0, 200)}`, snapshot: current };
    }
    return { change: null, snapshot: current };
  }

  return { snapshot, changesSince, close: () => probe?.close() };
}
