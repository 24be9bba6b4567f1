import type { SqlClient } from './sql-client.js';
import { deleteInChunks } from './delete-in-chunks.js';

/**
 * The owner of `handed_over_attempts`: the keys (`<deliveryId>:<attemptNumber>`) of relay.fresh jobs a
 * deliverer attempted after handing them over to their destination's topic (apps/deliverer/handed-over-jobs.ts),
 * kept for every deliverer sharing the store.
 */
export interface HandedOverAttempts {
  /** Adds keys (one statement); a key recorded before stays as it was. */
  record(keys: readonly string[], nowMs: number): Promise<void>;
  /** Which of `keys` were recorded. */
  attempted(keys: readonly string[]): Promise<Set<string>>;
  /** Deletes every key recorded before `nowMs`, in bounded statements; returns how many. */
  purgeBefore(nowMs: number): Promise<number>;
}

const inList = (values: readonly unknown[]) => values.map(() => '?').join(', ');

export function createHandedOverAttempts(sql: SqlClient): HandedOverAttempts {
  return {
    async record(keys, nowMs) {
      if (keys.length === 0) return;
      await sql.run(
        `INSERT INTO handed_over_attempts (job_key, attempted_at) VALUES ${keys.map(() => '(?, ?)').join(', ')} ON CONFLICT (job_key) DO NOTHING`,
        keys.flatMap((key) => [key, nowMs]),
      );
    },
    async attempted(keys) {
      if (keys.length === 0) return new Set();
      const rows = await sql.all<{ job_key: string }>(`SELECT job_key FROM handed_over_attempts WHERE job_key IN (${inList(keys)})`, [...keys]);
      return new Set(rows.map((row) => row.job_key));
    },
    purgeBefore: (nowMs) =>
      deleteInChunks((limit) =>
        sql.run(
          'DELETE FROM handed_over_attempts WHERE job_key IN (SELECT job_key FROM handed_over_attempts WHERE attempted_at < ? ORDER BY attempted_at LIMIT ?)',
          [nowMs, limit],
        ),
      ),
  };
}
