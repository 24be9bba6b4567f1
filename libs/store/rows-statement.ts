import type { SqlClient } from './sql-client.js';

/**
 * Rows one statement carries, largest first: a batch of any size is a few statements (a round trip each
 * on PostgreSQL, where a statement per row made the router and the recorder wait on the network), in a
 * few shapes only, so SQLite's cache of prepared statements stays small.
 */
const ROWS_PER_STATEMENT = [64, 16, 4, 1];

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
  for (const chunk of chunks(rows)) changed += await tx.run(text(statement, chunk.length), chunk.flat());
  return changed;
}

/** Runs the statement (one with `RETURNING` in its tail) over `rows`; returns what it returned. */
export async function allForRows<T>(tx: SqlClient, statement: RowsStatement, rows: unknown[][]): Promise<T[]> {
  const returned: T[] = [];
  for (const chunk of chunks(rows)) returned.push(...(await tx.all<T>(text(statement, chunk.length), chunk.flat())));
  return returned;
}

const text = (statement: RowsStatement, rows: number) =>
  `${statement.head} VALUES ${Array(rows).fill(statement.row).join(', ')}${statement.tail ? ` ${statement.tail}` : ''}`;

function chunks<T>(rows: T[]): T[][] {
  const result: T[][] = [];
  for (let at = 0; at < rows.length; ) {
    const size = ROWS_PER_STATEMENT.find((size) => size <= rows.length - at)!;
    result.push(rows.slice(at, at + size));
    at += size;
  }
  return result;
}
