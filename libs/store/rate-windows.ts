import type { SqlClient } from './sql-client.js';
import { deleteInChunks } from './delete-in-chunks.js';
import { storeBatcher } from './store-batcher.js';

/**
 * Fixed-window hit counters kept in the store, so every process sharing the database counts against the
 * same limit: hits are atomic upserts (gateways count leases of hits, `apps/gateway/source-rate-limits.ts`;
 * deliverers single hits). Hits are counted together by one statement
 * (one commit), each window once, adding how many hits it got: on SQLite those of one event-loop turn; on
 * PostgreSQL those made while the previous statement ran, one statement in flight per process (with
 * one per turn, a busy gateway on Kafka made about one upsert every two webhooks).
 */
export interface RateWindows {
  /** Counts one hit in the window containing `nowMs` and returns the window's total including it. A bucket has one window length. */
  hit(bucket: string, windowMs: number, nowMs: number): Promise<number>;
  /** Counts `count` hits at once (a gateway's lease, `source-rate-limits.ts`); returns the total including them. */
  add(bucket: string, windowMs: number, nowMs: number, count: number): Promise<number>;
  /** Deletes every window that started before `nowMs`, in bounded statements; returns how many. */
  purgeBefore(nowMs: number): Promise<number>;
}

interface WindowHit {
  bucket: string;
  windowStart: number;
  count: number;
}

interface WindowGroup extends WindowHit {
  /** Positions in the batch of the hits on this window, in arrival order; `count` is their sum. */
  positions: number[];
}

const windowKey = (bucket: string, windowStart: number) => `${windowStart} ${bucket}`;

async function countHits(sql: SqlClient, hits: WindowHit[]): Promise<number[]> {
  const groups = new Map<string, WindowGroup>();
  hits.forEach((hit, position) => {
    const key = windowKey(hit.bucket, hit.windowStart);
    const group = groups.get(key);
    if (group) {
      group.positions.push(position);
      group.count += hit.count;
    } else groups.set(key, { ...hit, positions: [position] });
  });
  // One fixed order for the rows of every statement: two gateways upserting the same windows cannot deadlock.
  const ordered = [...groups.values()].sort((a, b) => a.windowStart - b.windowStart || (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
  const rows = await sql.all<{ bucket: string; window_start: number; hits: number }>(
    `INSERT INTO rate_windows (bucket, window_start, hits) VALUES ${ordered.map(() => '(?, ?, ?)').join(', ')}
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_windows.hits + excluded.hits RETURNING bucket, window_start, hits`,
    ordered.flatMap((group) => [group.bucket, group.windowStart, group.count]),
  );
  const totals = new Array<number>(hits.length);
  for (const row of rows) {
    const group = groups.get(windowKey(row.bucket, Number(row.window_start)))!;
    let total = Number(row.hits) - group.count;
    for (const position of group.positions) totals[position] = total += hits[position]!.count;
  }
  return totals;
}

export function createRateWindows(sql: SqlClient): RateWindows {
  const hitBatched = storeBatcher(sql, (hits: WindowHit[]) => countHits(sql, hits));
  const add = (bucket: string, windowMs: number, nowMs: number, count: number) => hitBatched({ bucket, windowStart: nowMs - (nowMs % windowMs), count });
  return {
    add,
    hit: (bucket, windowMs, nowMs) => add(bucket, windowMs, nowMs, 1),
    purgeBefore: (nowMs) =>
      deleteInChunks((limit) =>
        sql.run(
          `DELETE FROM rate_windows WHERE (bucket, window_start) IN
             (SELECT bucket, window_start FROM rate_windows WHERE window_start < ? ORDER BY window_start LIMIT ?)`,
          [nowMs, limit],
        ),
      ),
  };
}
