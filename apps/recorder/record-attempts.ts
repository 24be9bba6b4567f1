import type { AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { addDestinationStats } from './destination-stats.js';
import { eventStatus, type DeliveryState } from './event-status.js';

async function insertAttempt(tx: SqlClient, a: AttemptRecord): Promise<boolean> {
  const [delivery] = await tx.all('SELECT id FROM deliveries WHERE id = ?', [a.deliveryId]);
  // The event (and with it the delivery) was deleted while this attempt was in flight.
  if (!delivery) return false;
  const inserted = await tx.run(
    `INSERT INTO attempts (id, org_id, delivery_id, event_id, destination_id, attempt_number, started_at, completed_at, ok,
       status_code, latency_ms, error, error_kind, response_body)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    [a.attemptId, a.orgId, a.deliveryId, a.eventId, a.destinationId, a.attemptNumber, a.startedAt, a.completedAt, tx.bool(a.ok),
      a.statusCode, Math.round(a.latencyMs), a.error, a.errorKind, a.responseBody],
  );
  if (inserted === 0) return false;
  // Attempts of one delivery are sequential; the guard keeps a redelivered older record from going back.
  await tx.run(
    `UPDATE deliveries SET status = ?, attempt_count = ?, last_status_code = ?, last_error = ?, latency_ms = ?,
       next_attempt_at = ?, delivered_at = ?, updated_at = ? WHERE id = ? AND attempt_count < ?`,
    [a.deliveryStatus, a.attemptNumber, a.statusCode, a.error, a.ok ? Math.round(a.latencyMs) : null, a.nextAttemptAt,
      a.ok ? a.completedAt : null, a.completedAt, a.deliveryId, a.attemptNumber],
  );
  return true;
}

/** Sets the event's status and counters from its deliveries (also after a replay adds or drops some). */
export async function refreshEvent(tx: SqlClient, eventId: string): Promise<void> {
  const deliveries = await tx.all<DeliveryState>(
    'SELECT id, destination_id AS "destinationId", status FROM deliveries WHERE event_id = ?',
    [eventId],
  );
  const succeeded = deliveries.filter((d) => d.status === 'delivered').length;
  const failed = deliveries.filter((d) => d.status === 'failed').length;
  await tx.run('UPDATE events SET status = ?, deliveries_count = ?, deliveries_succeeded = ?, deliveries_failed = ? WHERE id = ?', [
    eventStatus(deliveries),
    deliveries.length,
    succeeded,
    failed,
    eventId,
  ]);
}

/**
 * Writes a batch of attempts in one transaction: the attempt rows, each delivery's status, the status and
 * counters of every event they touch, and destination statistics. Idempotent on attempt ids (records are
 * at least once).
 */
export async function recordAttempts(sql: SqlClient, attempts: AttemptRecord[]): Promise<void> {
  await sql.transaction(async (tx) => {
    const inserted: AttemptRecord[] = [];
    for (const attempt of attempts) if (await insertAttempt(tx, attempt)) inserted.push(attempt);
    for (const eventId of new Set(inserted.map((attempt) => attempt.eventId))) await refreshEvent(tx, eventId);
    await addDestinationStats(tx, inserted);
  });
}
