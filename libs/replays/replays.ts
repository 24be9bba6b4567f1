import { z } from 'zod';
import type { EventKey } from '../ledger/event-queries.js';
import type { PageQuery } from '../store/org-scoped-repository.js';
import { decodeRows } from '../store/row-schema.js';
import type { SqlClient } from '../store/sql-client.js';

/**
 * The owner of `replays` (the jobs) and `replay_events` (each job's snapshot of event ids): every
 * statement on them is here. PostgreSQL returns BIGINT columns as text, hence the coercions.
 */

/** A replay job as stored. */
export const replayRowSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  status: z.enum(['running', 'completed', 'cancelled', 'failed']),
  /** JSON text of the filter as parsed (`from`/`to` in epoch ms). */
  filter: z.string(),
  /** JSON text, or null: the routes of each event's source. */
  destinationIds: z.string().nullable(),
  maxPerSecond: z.coerce.number(),
  matched: z.coerce.number(),
  replayed: z.coerce.number(),
  skipped: z.coerce.number(),
  createdAt: z.coerce.number(),
  finishedAt: z.coerce.number().nullable(),
  /** Why a `failed` job stopped; null otherwise. */
  error: z.string().nullable(),
});

export type ReplayRecord = z.infer<typeof replayRowSchema>;

const REPLAY_COLUMNS = `id, org_id AS "orgId", status, filter, destination_ids AS "destinationIds", max_per_second AS "maxPerSecond",
  matched, replayed, skipped, created_at AS "createdAt", finished_at AS "finishedAt", error`;

const nullableKey = z.coerce.number().nullable();

/** A running job as its runner reads it: where it is, and how far its snapshot is copied. */
export const dueReplaySchema = z.object({
  id: z.string(),
  orgId: z.string(),
  destinationIds: z.string().nullable(),
  maxPerSecond: z.coerce.number(),
  cursor: z.string().nullable(),
  filter: z.string(),
  /** The newest event matching at creation; null once its snapshot is copied. */
  untilCreatedAt: nullableKey,
  untilId: z.string().nullable(),
  afterCreatedAt: nullableKey,
  afterId: z.string().nullable(),
});

export type DueReplay = z.infer<typeof dueReplaySchema>;

export interface NewReplay {
  id: string;
  orgId: string;
  status: 'running' | 'completed';
  filter: string;
  destinationIds: string | null;
  maxPerSecond: number;
  matched: number;
  createdAt: number;
  finishedAt: number | null;
  /** The newest event the job's snapshot copies up to; null for a job that matched nothing. */
  until: EventKey | null;
}

export async function insertReplay(sql: SqlClient, job: NewReplay): Promise<void> {
  await sql.run(
    `INSERT INTO replays (id, org_id, status, filter, destination_ids, max_per_second, matched, replayed, skipped, created_at, finished_at,
       snapshot_until_created_at, snapshot_until_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?)`,
    [job.id, job.orgId, job.status, job.filter, job.destinationIds, job.maxPerSecond, job.matched, job.createdAt, job.finishedAt, job.until?.createdAt ?? null, job.until?.id ?? null],
  );
}

export async function replayById(sql: SqlClient, orgId: string, id: string): Promise<ReplayRecord | undefined> {
  const rows = await sql.all(`SELECT ${REPLAY_COLUMNS} FROM replays WHERE org_id = ? AND id = ?`, [orgId, id]);
  return decodeRows(replayRowSchema, 'replays', rows)[0];
}

/** The organization's jobs, newest first, and how many it has. */
export async function replayPage(sql: SqlClient, orgId: string, page: PageQuery): Promise<{ rows: ReplayRecord[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    sql.all(`SELECT ${REPLAY_COLUMNS} FROM replays WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, [orgId, page.pageSize, (page.page - 1) * page.pageSize]),
    sql.all<{ total: number | string }>('SELECT COUNT(*) AS total FROM replays WHERE org_id = ?', [orgId]),
  ]);
  return { rows: decodeRows(replayRowSchema, 'replays', rows), total: Number(count?.total ?? 0) };
}

/** Stops a running job; false when it had finished already. */
export async function cancelRunningReplay(sql: SqlClient, orgId: string, id: string, at: number): Promise<boolean> {
  return (await sql.run(`UPDATE replays SET status = 'cancelled', finished_at = ? WHERE org_id = ? AND id = ? AND status = 'running'`, [at, orgId, id])) > 0;
}

/** Running jobs that `owner` holds or whose lease has run out, oldest first. */
export async function dueReplays(sql: SqlClient, owner: string, at: number): Promise<DueReplay[]> {
  const rows = await sql.all(
    `SELECT id, org_id AS "orgId", destination_ids AS "destinationIds", max_per_second AS "maxPerSecond", cursor_event_id AS "cursor", filter,
       snapshot_until_created_at AS "untilCreatedAt", snapshot_until_id AS "untilId", snapshot_after_created_at AS "afterCreatedAt", snapshot_after_id AS "afterId"
     FROM replays WHERE status = 'running' AND (lease_owner = ? OR lease_until IS NULL OR lease_until < ?) ORDER BY created_at`,
    [owner, at],
  );
  return decodeRows(dueReplaySchema, 'replays', rows);
}

/** Takes the job's lease until `until`, unless another owner holds one that has not run out at `at`. */
export async function claimReplay(sql: SqlClient, id: string, owner: string, at: number, until: number): Promise<boolean> {
  const claimed = await sql.run(
    `UPDATE replays SET lease_owner = ?, lease_until = ? WHERE id = ? AND status = 'running' AND (lease_owner = ? OR lease_until IS NULL OR lease_until < ?)`,
    [owner, until, id, owner, at],
  );
  return claimed > 0;
}

export async function finishReplay(sql: SqlClient, id: string, status: 'completed' | 'failed', error: string | null, at: number): Promise<void> {
  await sql.run(`UPDATE replays SET status = ?, error = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? AND status = 'running'`, [
    status,
    error,
    at,
    id,
  ]);
}

/**
 * Records how far the snapshot is copied (`last`, or whole when `last` is null: `matched` then becomes
 * what the snapshot holds, as an event deleted since creation is not in it) and renews the lease.
 * Returns false when the job is no longer running (cancelled meanwhile).
 */
export async function saveSnapshotProgress(tx: SqlClient, id: string, last: EventKey | null, leaseUntil: number): Promise<boolean> {
  const progress =
    last === null
      ? `snapshot_until_created_at = NULL, snapshot_until_id = NULL, matched = (SELECT COUNT(*) FROM replay_events WHERE replay_id = ?)`
      : 'snapshot_after_created_at = ?, snapshot_after_id = ?';
  const changed = await tx.run(`UPDATE replays SET ${progress}, lease_until = ? WHERE id = ? AND status = 'running'`, [
    ...(last === null ? [id] : [last.createdAt, last.id]),
    leaseUntil,
    id,
  ]);
  return changed > 0;
}

/** The next `limit` event ids of the job's snapshot after `cursor`, in id order. */
export async function snapshotIdsAfter(sql: SqlClient, id: string, cursor: string | null, limit: number): Promise<string[]> {
  const rows = await sql.all(`SELECT event_id AS "eventId" FROM replay_events WHERE replay_id = ? AND event_id > ? ORDER BY event_id LIMIT ?`, [
    id,
    cursor ?? '',
    limit,
  ]);
  return decodeRows(z.object({ eventId: z.string() }), 'replay_events', rows).map((row) => row.eventId);
}

/** A step is done: the cursor moves past its last event, the counts grow, the lease is renewed. */
export async function advanceReplayCursor(sql: SqlClient, id: string, step: { cursor: string; replayed: number; skipped: number; leaseUntil: number }): Promise<void> {
  await sql.run(`UPDATE replays SET cursor_event_id = ?, replayed = replayed + ?, skipped = skipped + ?, lease_until = ? WHERE id = ?`, [
    step.cursor,
    step.replayed,
    step.skipped,
    step.leaseUntil,
    id,
  ]);
}

/** A stopping runner lets its jobs go, so another may take them at once. */
export async function releaseReplayLeases(sql: SqlClient, owner: string): Promise<void> {
  await sql.run(`UPDATE replays SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ? AND status = 'running'`, [owner]);
}
