import type { SqlClient } from '../store/sql-client.js';

export const DAY_MS = 86_400_000;

export interface RetentionPolicy {
  payloadRetentionMs: number;
  eventRetentionMs: number;
}

export interface SweepCounts {
  payloadsExpired: number;
  eventsDeleted: number;
}

/**
 * One bounded batch of payloads past retention: the bytes and the search text go, the event stays with
 * `payload_expired_at` set. Oldest first, through the partial index of live payloads.
 */
export function expirePayloads(sql: SqlClient, cutoff: number, now: number, batchSize: number): Promise<number> {
  return sql.run(
    `UPDATE events SET payload = NULL, payload_text = NULL, payload_expired_at = ?
     WHERE id IN (SELECT id FROM events WHERE payload_expired_at IS NULL AND created_at < ? ORDER BY created_at LIMIT ?)`,
    [now, cutoff, batchSize],
  );
}

/** One bounded batch of events past retention; their deliveries and attempts go with them (cascade). */
export function deleteEvents(sql: SqlClient, cutoff: number, batchSize: number): Promise<number> {
  return sql.run('DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?)', [cutoff, batchSize]);
}

/**
 * Applies retention in batches until nothing is left past it, or `shouldStop` says so; each batch is a
 * statement of its own, so no lock is held for long.
 */
export async function sweepRetention(
  sql: SqlClient,
  policy: RetentionPolicy,
  options: { now: number; batchSize: number; shouldStop?: () => boolean },
): Promise<SweepCounts> {
  const counts: SweepCounts = { payloadsExpired: 0, eventsDeleted: 0 };
  const stop = options.shouldStop ?? (() => false);
  for (;;) {
    const deleted = await deleteEvents(sql, options.now - policy.eventRetentionMs, options.batchSize);
    counts.eventsDeleted += deleted;
    if (deleted < options.batchSize || stop()) break;
  }
  while (!stop()) {
    const expired = await expirePayloads(sql, options.now - policy.payloadRetentionMs, options.now, options.batchSize);
    counts.payloadsExpired += expired;
    if (expired < options.batchSize) break;
  }
  return counts;
}

/** Destination statistics by hour older than the events they describe. */
export function purgeStatisticsBefore(sql: SqlClient, cutoff: number): Promise<number> {
  return sql.run('DELETE FROM destination_hourly_stats WHERE hour_start < ?', [cutoff]);
}
