import type { SqlClient } from './sql-client.js';

/**
 * SQLite: rows one statement carries, largest first. A batch of any size is a few statements in a few
 * shapes only, so the connection's cache of prepared statements stays small (SQLite statements run in
 * process: several cost no round trip).
 */
const SQLITE_ROWS_PER_STATEMENT = [64, 16, 4, 1];
/**
 * PostgreSQL: a batch is one statement, up to the protocol's limit of bind parameters (a 16-bit count).
 * Each statement is a round trip and its text is parsed anew whatever its shape (unnamed statements), so
 * the shapes SQLite needs only cost round trips here: a batch of 63 rows took nine.
 */
const POSTGRES_MAX_PARAMETERS = 65_535;

/** A statement around a `VALUES` list: `${head} VALUES (...), (...) ${tail}`. */
export interface RowsStatement {
  /** `INSERT INTO table (columns)`, or `UPDATE table SET ... FROM (`. */
  head: string;
  /** One row's values, `(?, ?, 0, ?)`, with as many `?` as each row of `rows` has values. */
  row: string;
  /** `ON CONFLICT (id) DO NOTHING RETURNING id`, or `) AS v WHERE table.id = v.column1`. */
  tail?: string;
}

/** Runs the statement over `rows`, a few statements at most; returns the rows changed. */
export async function runForRows(tx: SqlClient, statement: RowsStatement, rows: unknown[][]): Promise<number> {
  let changed = 0;
  for (const chunk of chunks(tx, rows)) changed += await tx.run(text(statement, chunk.length), chunk.flat());
  return changed;
}

/** Runs the statement (one with `RETURNING` in its tail) over `rows`; returns what it returned. */
export async function allForRows<T>(tx: SqlClient, statement: RowsStatement, rows: unknown[][]): Promise<T[]> {
  const returned: T[] = [];
  for (const chunk of chunks(tx, rows)) returned.push(...(await tx.all<T>(text(statement, chunk.length), chunk.flat())));
  return returned;
}

const text = (statement: RowsStatement, rows: number) =>
  `${statement.head} VALUES ${Array(rows).fill(statement.row).join(', ')}${statement.tail ? ` ${statement.tail}` : ''}`;

function chunks(tx: Pick<SqlClient, 'kind'>, rows: unknown[][]): unknown[][][] {
  if (tx.kind === 'postgres') {
    const size = Math.max(1, Math.floor(POSTGRES_MAX_PARAMETERS / Math.max(1, rows[0]?.length ?? 1)));
    return Array.from({ length: Math.ceil(rows.length / size) }, (_, index) => rows.slice(index * size, (index + 1) * size));
  }
  const result: unknown[][][] = [];
  for (let at = 0; at < rows.length; ) {
    const size = SQLITE_ROWS_PER_STATEMENT.find((size) => size <= rows.length - at)!;
    result.push(rows.slice(at, at + size));
    at += size;
  }
  return result;
}
