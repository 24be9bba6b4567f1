import { z } from 'zod';
import { runForRows } from '../store/rows-statement.js';
import type { SqlClient } from '../store/sql-client.js';

/**
 * A destination's current run of attempts: since when every attempt has failed (null while the latest
 * succeeded), how many failed, how many succeeded in a row, and whether the auto-disable warning went out.
 */
export const failureStreakSchema = z.object({
  failingSince: z.coerce.number().nullable(),
  failedAttempts: z.coerce.number().int(),
  successes: z.coerce.number().int(),
  warned: z.coerce.boolean(),
});

export type FailureStreak = z.infer<typeof failureStreakSchema>;

export const NO_STREAK: FailureStreak = { failingSince: null, failedAttempts: 0, successes: 0, warned: false };

/** The destinations a batch of attempts touches, locked in id order (PostgreSQL), with their streaks. */
export interface StreakedDestination {
  id: string;
  orgId: string;
  name: string;
  url: string;
  enabled: boolean;
  autoDisableAfterSeconds: number | null;
  streak: FailureStreak;
}

const destinationSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string(),
  url: z.string(),
  enabled: z.coerce.boolean(),
  autoDisableAfterSeconds: z.coerce.number().int().nullable(),
  failingSince: z.coerce.number().nullable(),
  failedAttempts: z.coerce.number().int().nullable(),
  successes: z.coerce.number().int().nullable(),
  warned: z.coerce.boolean().nullable(),
});

/**
 * Reads the destinations and their streaks in one statement. On PostgreSQL the destination rows are
 * locked (NO KEY UPDATE, as the recorder's other locks), so recorders of other processes count one run at a time.
 */
export async function selectStreakedDestinations(tx: SqlClient, ids: string[]): Promise<StreakedDestination[]> {
  if (ids.length === 0) return [];
  const sorted = [...new Set(ids)].sort();
  const rows = await tx.all(
    `SELECT d.id, d.org_id AS "orgId", d.name, d.url, d.enabled, d.auto_disable_after_seconds AS "autoDisableAfterSeconds",
       s.failing_since AS "failingSince", s.failed_attempts AS "failedAttempts", s.successes, s.warned
     FROM destinations d LEFT JOIN destination_failure_streaks s ON s.destination_id = d.id
     WHERE d.id IN (${sorted.map(() => '?').join(', ')}) ORDER BY d.id${tx.kind === 'postgres' ? ' FOR NO KEY UPDATE OF d' : ''}`,
    sorted,
  );
  return rows.map((raw) => {
    const row = destinationSchema.parse(raw);
    const streak = row.failedAttempts === null ? NO_STREAK : failureStreakSchema.parse(row);
    return { id: row.id, orgId: row.orgId, name: row.name, url: row.url, enabled: row.enabled, autoDisableAfterSeconds: row.autoDisableAfterSeconds, streak };
  });
}

/** Writes the streaks a batch changed: one statement. */
export async function upsertStreaks(tx: SqlClient, streaks: { destinationId: string; streak: FailureStreak }[]): Promise<void> {
  if (streaks.length === 0) return;
  const cast = (type: string) => (tx.kind === 'postgres' ? `?::${type}` : '?');
  await runForRows(
    tx,
    {
      head: 'INSERT INTO destination_failure_streaks (destination_id, failing_since, failed_attempts, successes, warned)',
      row: `(?, ${cast('bigint')}, ${cast('integer')}, ${cast('integer')}, ${cast('boolean')})`,
      tail: `ON CONFLICT (destination_id) DO UPDATE SET failing_since = excluded.failing_since, failed_attempts = excluded.failed_attempts,
        successes = excluded.successes, warned = excluded.warned`,
    },
    streaks.map(({ destinationId, streak }) => [destinationId, streak.failingSince, streak.failedAttempts, streak.successes, tx.bool(streak.warned)]),
  );
}

/** Enabling a destination again restarts its clock (and allows a new warning). */
export async function restartStreak(sql: SqlClient, destinationId: string): Promise<void> {
  await sql.run('DELETE FROM destination_failure_streaks WHERE destination_id = ?', [destinationId]);
}

/** Disables a destination that kept failing; false when it was no longer enabled. */
export async function disableFailingDestination(tx: SqlClient, destinationId: string, at: number): Promise<boolean> {
  const changed = await tx.run(
    `UPDATE destinations SET enabled = ?, disabled_reason = 'failing', disabled_at = ?, updated_at = ? WHERE id = ? AND enabled = ?`,
    [tx.bool(false), at, at, destinationId, tx.bool(true)],
  );
  return changed > 0;
}
