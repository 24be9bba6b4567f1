import type { Logger } from '../logging/logger.js';
import type { SqlClient } from './sql-client.js';

/**
 * Exact event counts by organization, source and status, read from `event_counts` (kept by triggers on
 * `events`, migration 0010): a few rows per source, however many events there are.
 */
export interface EventCountKey {
  sourceId?: string;
  status?: string;
}

export async function countEvents(sql: SqlClient, orgId: string, key: EventCountKey = {}): Promise<number> {
  const conditions = ['org_id = ?'];
  const params: unknown[] = [orgId];
  if (key.sourceId !== undefined) conditions.push('source_id = ?'), params.push(key.sourceId);
  if (key.status !== undefined) conditions.push('status = ?'), params.push(key.status);
  const [row] = await sql.all<{ n: number | string | null }>(`SELECT SUM(n) AS n FROM event_counts WHERE ${conditions.join(' AND ')}`, params);
  return Number(row?.n ?? 0);
}

/** Each listed source's event count (0 for a source without events). */
export async function countEventsBySource(sql: SqlClient, orgId: string, sourceIds: string[]): Promise<Map<string, number>> {
  const counts = new Map(sourceIds.map((id) => [id, 0]));
  if (sourceIds.length === 0) return counts;
  const rows = await sql.all<{ sourceId: string; n: number | string }>(
    `SELECT source_id AS "sourceId", SUM(n) AS n FROM event_counts WHERE org_id = ? AND source_id IN (${sourceIds.map(() => '?').join(', ')})
     GROUP BY source_id`,
    [orgId, ...sourceIds],
  );
  for (const row of rows) counts.set(row.sourceId, Number(row.n));
  return counts;
}

/**
 * Folds the deltas PostgreSQL's triggers append into one row per key, and drops keys that sum to 0 (a
 * deleted source's). One statement: a reader sees the deltas or their sum, never both or neither; deltas
 * committed meanwhile are left for the next fold. On SQLite the rows are updated in place, and only the
 * emptied ones go. Returns the rows removed.
 */
export function foldEventCounts(sql: SqlClient): Promise<number> {
  if (sql.kind === 'sqlite') return sql.run('DELETE FROM event_counts WHERE n = 0');
  return sql
    .all<{ removed: number }>(
      `WITH keys AS (
         SELECT org_id, source_id, status FROM event_counts GROUP BY org_id, source_id, status HAVING COUNT(*) > 1 OR SUM(n) = 0
       ), folded AS (
         DELETE FROM event_counts c USING keys k WHERE c.org_id = k.org_id AND c.source_id = k.source_id AND c.status = k.status
         RETURNING c.org_id, c.source_id, c.status, c.n
       ), kept AS (
         INSERT INTO event_counts (org_id, source_id, status, n)
         SELECT org_id, source_id, status, SUM(n) FROM folded GROUP BY org_id, source_id, status HAVING SUM(n) <> 0 RETURNING 1
       )
       SELECT (SELECT COUNT(*) FROM folded) - (SELECT COUNT(*) FROM kept) AS removed`,
    )
    .then(([row]) => Number(row?.removed ?? 0));
}

/**
 * Folds event counts every `intervalMs` until stopped, so a count reads a few rows per key however fast
 * events arrive (on PostgreSQL about three deltas per event build up between folds). A fold still running
 * when the next is due is not doubled; a failed fold is logged and the next one tries again.
 */
export function startEventCountFolding(options: { sql: SqlClient; logger: Logger; intervalMs?: number }): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 10_000;
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= foldEventCounts(options.sql)
      .then(() => undefined, (error) => options.logger.error({ err: error }, 'folding event counts failed'))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
