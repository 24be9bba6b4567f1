import { z } from 'zod';
import { newId } from '../ids/ids.js';
import type { SqlClient } from '../store/sql-client.js';
import type { NotificationBody, NotificationTopic } from './notification-topics.js';

/** A notification for the channels of `orgId` that take its topic, written in the caller's transaction. */
export interface Notification {
  orgId: string;
  topic: NotificationTopic;
  data: unknown;
  at: number;
}

/**
 * Queues the notification for every enabled channel of the organization subscribed to its topic: one
 * statement, and nothing at all is sent here (the notifier drains the outbox), so the pipeline's
 * transaction never waits on a channel.
 */
export async function enqueueNotification(tx: SqlClient, notification: Notification): Promise<void> {
  const body: NotificationBody = { type: notification.topic, createdAt: new Date(notification.at).toISOString(), data: notification.data };
  await tx.run(
    `INSERT INTO notification_outbox (notification_id, channel_id, topic, body, attempts, next_attempt_at, created_at)
     SELECT ?, id, ?, ?, 0, ?, ? FROM notification_channels WHERE org_id = ? AND enabled = ? AND topics LIKE ?`,
    [newId('ntf'), notification.topic, JSON.stringify(body), notification.at, notification.at, notification.orgId, tx.bool(true), `%"${notification.topic}"%`],
  );
}

export const outboxRowSchema = z.object({
  notificationId: z.string(),
  channelId: z.string(),
  body: z.string(),
  attempts: z.coerce.number().int(),
});

export type OutboxRow = z.infer<typeof outboxRowSchema>;

/**
 * Takes up to `limit` due notifications and hides them for `leaseMs` (another notifier, or this one after a
 * crash, takes them once the lease ends): one statement.
 */
export async function claimDueNotifications(sql: SqlClient, now: number, leaseMs: number, limit: number): Promise<OutboxRow[]> {
  // A read first: an empty outbox, the usual case, then costs no write lock (SQLite has one writer).
  const [due] = await sql.all('SELECT 1 AS due FROM notification_outbox WHERE next_attempt_at <= ? LIMIT 1', [now]);
  if (!due) return [];
  const rows = await sql.all(
    `UPDATE notification_outbox SET next_attempt_at = ? WHERE (notification_id, channel_id) IN
       (SELECT notification_id, channel_id FROM notification_outbox WHERE next_attempt_at <= ? ORDER BY next_attempt_at, notification_id LIMIT ?)
     RETURNING notification_id AS "notificationId", channel_id AS "channelId", body, attempts`,
    [now + leaseMs, now, limit],
  );
  return rows.map((row) => outboxRowSchema.parse(row));
}

/** A notification that arrived, or that will not be tried again. */
export async function dropNotification(sql: SqlClient, row: Pick<OutboxRow, 'notificationId' | 'channelId'>): Promise<void> {
  await sql.run('DELETE FROM notification_outbox WHERE notification_id = ? AND channel_id = ?', [row.notificationId, row.channelId]);
}

export async function retryNotificationAt(sql: SqlClient, row: Pick<OutboxRow, 'notificationId' | 'channelId' | 'attempts'>, at: number): Promise<void> {
  await sql.run('UPDATE notification_outbox SET attempts = ?, next_attempt_at = ? WHERE notification_id = ? AND channel_id = ?', [
    row.attempts + 1,
    at,
    row.notificationId,
    row.channelId,
  ]);
}
