import type { SqlClient } from './sql-client.js';

/**
 * Fixed-window hit counters kept in the store, so every gateway process sharing the database counts
 * against the same limit, exactly: each hit is one atomic upsert.
 */
export interface RateWindows {
  /** Counts one hit in the window containing `nowMs` and returns the window's total including it. */
  hit(bucket: string, windowMs: number, nowMs: number): Promise<number>;
  purgeBefore(nowMs: number): Promise<number>;
}

const HIT = `INSERT INTO rate_windows (bucket, window_start, hits) VALUES (?, ?, 1)
  ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_windows.hits + 1 RETURNING hits`;

export function createRateWindows(sql: SqlClient): RateWindows {
  return {
    async hit(bucket, windowMs, nowMs) {
      const [row] = await sql.all<{ hits: number }>(HIT, [bucket, nowMs - (nowMs % windowMs)]);
      return Number(row!.hits);
    },
    purgeBefore: (nowMs) => sql.run('DELETE FROM rate_windows WHERE window_start < ?', [nowMs]),
  };
}
