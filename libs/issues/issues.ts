import { z } from 'zod';
import { runForRows } from '../store/rows-statement.js';
import type { SqlClient } from '../store/sql-client.js';
import { isoTime } from '../time/iso-time.js';
import { ISSUE_KINDS, ISSUE_STATUSES, type IssueStatus } from './issue-kinds.js';

/** Event ids an issue keeps, newest first. */
export const ISSUE_SAMPLE_SIZE = 10;

const instant = z.coerce.number();

/** An issue as stored; BIGINT columns arrive as text from PostgreSQL, the sample as JSON text. */
export const issueRowSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  destinationId: z.string(),
  kind: z.enum(ISSUE_KINDS),
  status: z.enum(ISSUE_STATUSES),
  firstSeenAt: instant,
  lastSeenAt: instant,
  failedAttempts: z.coerce.number().int(),
  lastStatusCode: z.coerce.number().int().nullable(),
  lastError: z.string().nullable(),
  sampleEventIds: z.preprocess((text) => (typeof text === 'string' ? JSON.parse(text) : text), z.array(z.string())),
  createdAt: instant,
  updatedAt: instant,
});

export type IssueRow = z.infer<typeof issueRowSchema>;

const COLUMNS = `id, org_id AS "orgId", destination_id AS "destinationId", kind, status, first_seen_at AS "firstSeenAt", last_seen_at AS "lastSeenAt",
  failed_attempts AS "failedAttempts", last_status_code AS "lastStatusCode", last_error AS "lastError", sample_event_ids AS "sampleEventIds",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const decode = (rows: unknown[]) => rows.map((row) => issueRowSchema.parse(row));

/** The issue as the API and notifications show it. */
export function issueView(row: IssueRow) {
  return {
    id: row.id,
    destinationId: row.destinationId,
    kind: row.kind,
    status: row.status,
    firstSeenAt: isoTime(row.firstSeenAt)!,
    lastSeenAt: isoTime(row.lastSeenAt)!,
    failedAttempts: row.failedAttempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    sampleEventIds: row.sampleEventIds,
    createdAt: isoTime(row.createdAt)!,
    updatedAt: isoTime(row.updatedAt)!,
  };
}

export type IssueView = ReturnType<typeof issueView>;

/** The issues of these destinations (the recorder's batch reads them once). */
export async function selectIssuesOf(tx: SqlClient, destinationIds: string[]): Promise<IssueRow[]> {
  if (destinationIds.length === 0) return [];
  return decode(await tx.all(`SELECT ${COLUMNS} FROM issues WHERE destination_id IN (${destinationIds.map(() => '?').join(', ')})`, destinationIds));
}

const UPSERT_FIELDS = ['status', 'last_seen_at', 'failed_attempts', 'last_status_code', 'last_error', 'sample_event_ids', 'updated_at'];

/** Writes the issues a batch opened or changed: one statement, whatever their number. */
export async function upsertIssues(tx: SqlClient, rows: IssueRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((r) => [r.id, r.orgId, r.destinationId, r.kind, r.status, r.firstSeenAt, r.lastSeenAt, r.failedAttempts, r.lastStatusCode, r.lastError,
    JSON.stringify(r.sampleEventIds), r.createdAt, r.updatedAt]);
  const cast = (type: string) => (tx.kind === 'postgres' ? `?::${type}` : '?');
  await runForRows(tx, {
    head: `INSERT INTO issues (id, org_id, destination_id, kind, status, first_seen_at, last_seen_at, failed_attempts, last_status_code, last_error,
      sample_event_ids, created_at, updated_at)`,
    row: `(?, ?, ?, ?, ?, ${cast('bigint')}, ${cast('bigint')}, ${cast('integer')}, ${cast('integer')}, ${cast('text')}, ?, ${cast('bigint')}, ${cast('bigint')})`,
    tail: `ON CONFLICT (id) DO UPDATE SET ${UPSERT_FIELDS.map((field) => `${field} = excluded.${field}`).join(', ')}`,
  }, values);
}

export interface IssueFilter {
  status?: IssueStatus;
  destinationId?: string;
  kind?: string;
}

/** A page of an organization's issues, the latest seen first. */
export async function listIssues(sql: SqlClient, orgId: string, filter: IssueFilter, page: { page: number; pageSize: number }) {
  const conditions = ['org_id = ?'];
  const params: unknown[] = [orgId];
  for (const [column, value] of [['status', filter.status], ['destination_id', filter.destinationId], ['kind', filter.kind]] as const) {
    if (value === undefined) continue;
    conditions.push(`${column} = ?`);
    params.push(value);
  }
  const where = conditions.join(' AND ');
  const [rows, [count]] = await Promise.all([
    sql.all(`SELECT ${COLUMNS} FROM issues WHERE ${where} ORDER BY last_seen_at DESC, id DESC LIMIT ? OFFSET ?`, [...params, page.pageSize, (page.page - 1) * page.pageSize]),
    sql.all<{ total: number | string }>(`SELECT COUNT(*) AS total FROM issues WHERE ${where}`, params),
  ]);
  return { rows: decode(rows), total: Number(count?.total ?? 0) };
}

export async function selectIssue(sql: SqlClient, orgId: string, id: string): Promise<IssueRow | null> {
  const [row] = decode(await sql.all(`SELECT ${COLUMNS} FROM issues WHERE org_id = ? AND id = ?`, [orgId, id]));
  return row ?? null;
}

/** Sets an issue's status by hand; returns it as it was before, null when there is no such issue. */
export async function setIssueStatus(tx: SqlClient, orgId: string, id: string, status: IssueStatus, now: number): Promise<IssueRow | null> {
  const [before] = decode(await tx.all(`SELECT ${COLUMNS} FROM issues WHERE org_id = ? AND id = ?${tx.kind === 'postgres' ? ' FOR UPDATE' : ''}`, [orgId, id]));
  if (!before) return null;
  await tx.run('UPDATE issues SET status = ?, updated_at = ? WHERE id = ?', [status, now, id]);
  return before;
}

/** How many issues are open, by kind, over every organization (`relay_issues_open`). */
export async function countOpenIssues(sql: SqlClient): Promise<Map<string, number>> {
  const rows = await sql.all<{ kind: string; open: number | string }>(`SELECT kind, COUNT(*) AS open FROM issues WHERE status = 'open' GROUP BY kind`);
  return new Map(rows.map((row) => [row.kind, Number(row.open)]));
}
