import { z } from 'zod';
import type { SqlClient } from '../store/sql-client.js';
import { NOTIFICATION_TOPICS } from './notification-topics.js';

export const CHANNEL_TYPES = ['webhook', 'slack'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

const instant = z.coerce.number();
const json = <S extends z.ZodType>(schema: S) => z.preprocess((text) => (typeof text === 'string' ? JSON.parse(text) : text), schema);

/** A notification channel as stored: its URL (a Slack URL is a credential) and signing secret sealed. */
export const channelRowSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string(),
  type: z.enum(CHANNEL_TYPES),
  urlSealed: z.string(),
  urlShown: z.string(),
  topics: json(z.array(z.enum(NOTIFICATION_TOPICS))),
  enabled: z.coerce.boolean(),
  signingSecretSealed: z.string().nullable(),
  lastDeliveredAt: instant.nullable(),
  lastFailureAt: instant.nullable(),
  lastError: z.string().nullable(),
  createdAt: instant,
  updatedAt: instant,
});

export type ChannelRow = z.infer<typeof channelRowSchema>;

const COLUMNS = `id, org_id AS "orgId", name, type, url_sealed AS "urlSealed", url_shown AS "urlShown", topics, enabled,
  signing_secret_sealed AS "signingSecretSealed", last_delivered_at AS "lastDeliveredAt", last_failure_at AS "lastFailureAt",
  last_error AS "lastError", created_at AS "createdAt", updated_at AS "updatedAt"`;

const decode = (rows: unknown[]) => rows.map((row) => channelRowSchema.parse(row));

export async function insertChannel(sql: SqlClient, row: ChannelRow): Promise<void> {
  await sql.run(
    `INSERT INTO notification_channels (id, org_id, name, type, url_sealed, url_shown, topics, enabled, signing_secret_sealed, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [row.id, row.orgId, row.name, row.type, row.urlSealed, row.urlShown, JSON.stringify(row.topics), sql.bool(row.enabled), row.signingSecretSealed, row.createdAt, row.updatedAt],
  );
}

export async function selectChannel(sql: SqlClient, orgId: string, id: string): Promise<ChannelRow | null> {
  const [row] = decode(await sql.all(`SELECT ${COLUMNS} FROM notification_channels WHERE org_id = ? AND id = ?`, [orgId, id]));
  return row ?? null;
}

/** The channels the notifier sends to, by id, whatever their organization. */
export async function selectChannelsByIds(sql: SqlClient, ids: string[]): Promise<Map<string, ChannelRow>> {
  if (ids.length === 0) return new Map();
  const unique = [...new Set(ids)];
  const rows = decode(await sql.all(`SELECT ${COLUMNS} FROM notification_channels WHERE id IN (${unique.map(() => '?').join(', ')})`, unique));
  return new Map(rows.map((row) => [row.id, row]));
}

export async function listChannels(sql: SqlClient, orgId: string, page: { page: number; pageSize: number }) {
  const [rows, [count]] = await Promise.all([
    sql.all(`SELECT ${COLUMNS} FROM notification_channels WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, [orgId, page.pageSize, (page.page - 1) * page.pageSize]),
    sql.all<{ total: number | string }>('SELECT COUNT(*) AS total FROM notification_channels WHERE org_id = ?', [orgId]),
  ]);
  return { rows: decode(rows), total: Number(count?.total ?? 0) };
}

/** The settable fields of a channel, as stored. */
export type ChannelChanges = Partial<Pick<ChannelRow, 'name' | 'urlSealed' | 'urlShown' | 'topics' | 'enabled' | 'signingSecretSealed'>>;

const CHANGE_COLUMNS: Record<keyof ChannelChanges, string> = {
  name: 'name',
  urlSealed: 'url_sealed',
  urlShown: 'url_shown',
  topics: 'topics',
  enabled: 'enabled',
  signingSecretSealed: 'signing_secret_sealed',
};

export async function updateChannel(sql: SqlClient, orgId: string, id: string, changes: ChannelChanges, now: number): Promise<boolean> {
  const entries = Object.entries(changes).filter(([, value]) => value !== undefined) as [keyof ChannelChanges, unknown][];
  const values = entries.map(([field, value]) => (field === 'topics' ? JSON.stringify(value) : field === 'enabled' ? sql.bool(value as boolean) : value));
  const sets = [...entries.map(([field]) => `${CHANGE_COLUMNS[field]} = ?`), 'updated_at = ?'];
  return (await sql.run(`UPDATE notification_channels SET ${sets.join(', ')} WHERE org_id = ? AND id = ?`, [...values, now, orgId, id])) > 0;
}

/** Removes the channel and what is still queued for it. */
export async function deleteChannel(sql: SqlClient, orgId: string, id: string): Promise<boolean> {
  return (await sql.run('DELETE FROM notification_channels WHERE org_id = ? AND id = ?', [orgId, id])) > 0;
}

/** What the last send to the channel came to, shown on the channel (`lastDeliveredAt`, or `lastFailureAt` and `lastError`). */
export async function recordChannelOutcome(sql: SqlClient, id: string, at: number, error: string | null): Promise<void> {
  if (error === null) await sql.run('UPDATE notification_channels SET last_delivered_at = ? WHERE id = ?', [at, id]);
  else await sql.run('UPDATE notification_channels SET last_failure_at = ?, last_error = ? WHERE id = ?', [at, error.slice(0, 1000), id]);
}
