import type { SqlClient } from './sql-client.js';

export interface LedgerKey {
  key: string;
  windowMs: number;
}

/**
 * Dedup keys per source. `claim` checks and inserts every key in one transaction: either all are
 * claimed for the new event (null), or the event id holding a live key is returned and nothing changes.
 * On PostgreSQL a concurrent claim of the same key waits on the primary key until the first commits,
 * then sees it; on SQLite the transaction holds the write lock.
 */
export interface DedupLedger {
  claim(sourceId: string, keys: LedgerKey[], eventId: string, nowMs: number): Promise<string | null>;
  /** Undoes a claim whose event could not be made durable, so the provider's retry is not a duplicate. */
  release(sourceId: string, keys: LedgerKey[], eventId: string): Promise<void>;
  purgeExpired(nowMs: number): Promise<number>;
}

// An expired key is taken over in place; a live one makes the statement return no row.
const CLAIM = `INSERT INTO dedup_keys (source_id, dedup_key, event_id, expires_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (source_id, dedup_key) DO UPDATE SET event_id = excluded.event_id, expires_at = excluded.expires_at
  WHERE dedup_keys.expires_at <= ? RETURNING event_id`;
const HOLDER = 'SELECT event_id FROM dedup_keys WHERE source_id = ? AND dedup_key = ?';

/** Thrown inside the transaction to roll back every key claimed so far. */
class KeyHeld {
  constructor(readonly eventId: string) {}
}

export function createDedupLedger(sql: SqlClient): DedupLedger {
  return {
    async claim(sourceId, keys, eventId, nowMs) {
      try {
        await sql.transaction(async (tx) => {
          for (const { key, windowMs } of keys) {
            const claimed = await tx.all(CLAIM, [sourceId, key, eventId, nowMs + windowMs, nowMs]);
            if (claimed.length > 0) continue;
            const [holder] = await tx.all<{ event_id: string }>(HOLDER, [sourceId, key]);
            if (holder) throw new KeyHeld(holder.event_id);
          }
        });
        return null;
      } catch (error) {
        if (error instanceof KeyHeld) return error.eventId;
        throw error;
      }
    },
    async release(sourceId, keys, eventId) {
      if (keys.length === 0) return;
      await sql.run(
        `DELETE FROM dedup_keys WHERE source_id = ? AND event_id = ? AND dedup_key IN (${keys.map(() => '?').join(', ')})`,
        [sourceId, eventId, ...keys.map((k) => k.key)],
      );
    },
    purgeExpired: (nowMs) => sql.run('DELETE FROM dedup_keys WHERE expires_at <= ?', [nowMs]),
  };
}
