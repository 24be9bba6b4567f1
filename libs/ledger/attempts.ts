import type { AttemptRecord } from '../pipeline/attempt-record.js';
import { decodeRows } from '../store/row-schema.js';
import { allForRows, runForRows } from '../store/rows-statement.js';
import type { SqlClient } from '../store/sql-client.js';
import { foldAttemptsIntoIssues, type DisabledDestination } from '../issues/attempt-issues.js';
import { addDestinationStats } from './destination-stats.js';
import { eventStatus, type DeliveryState } from './event-status.js';
import { eventDeliveryRowSchema } from './ledger-rows.js';

/*
 * A batch is written with one statement per kind of write (attempts, deliveries, events, statistics), not
 * one per attempt: on PostgreSQL each statement is a round trip, and per-attempt statements made the
 * recorder the relay's largest cost per event. The rows a write depends on are locked in id order by the
 * same statement (PostgreSQL), so batches of other partitions touching the same deliveries or events
 * never deadlock.
 */

/** VALUES rows are untyped parameters on PostgreSQL: each column says its type. */
const valuesRow = (tx: SqlClient, types: string[]) => `(${types.map((type) => (tx.kind === 'postgres' ? `?::${type}` : '?')).join(', ')})`;

/**
 * Locks what a select reads on PostgreSQL. NO KEY UPDATE is the lock the updates take anyway: FOR UPDATE
 * would also wait for the key-share locks of foreign-key checks (the search indexer's inserts hold them on
 * events), and deadlock with them.
 */
const forUpdate = (tx: SqlClient) => (tx.kind === 'postgres' ? ' FOR NO KEY UPDATE' : '');

/** The attempts whose delivery still exists (locked), inserted unless recorded before; returns their ids. */
const attemptInsert = (tx: SqlClient) => ({
  head: 'WITH v AS (',
  row: valuesRow(tx, ['varchar', 'varchar', 'varchar', 'varchar', 'varchar', 'integer', 'bigint', 'bigint', 'boolean', 'integer', 'integer', 'text', 'varchar', 'text']),
  tail: `), live AS (SELECT id FROM deliveries WHERE id IN (SELECT column3 FROM v) ORDER BY id${forUpdate(tx)})
    INSERT INTO attempts (id, org_id, delivery_id, event_id, destination_id, attempt_number, started_at, completed_at, ok,
    status_code, latency_ms, error, error_kind, response_body)
    SELECT v.* FROM v JOIN live ON live.id = v.column3 WHERE true ON CONFLICT (id) DO NOTHING RETURNING id`,
});

/** Attempts of one delivery are sequential; the guard keeps a redelivered older record from going back. */
const deliveryUpdate = (tx: SqlClient) => ({
  head: `UPDATE deliveries SET status = v.column2, attempt_count = v.column3, last_status_code = v.column4, last_error = v.column5, latency_ms = v.column6,
    next_attempt_at = v.column7, delivered_at = v.column8, updated_at = v.column9 FROM (`,
  row: valuesRow(tx, ['varchar', 'varchar', 'integer', 'integer', 'text', 'integer', 'bigint', 'bigint', 'bigint']),
  tail: ') AS v WHERE deliveries.id = v.column1 AND deliveries.attempt_count < v.column3',
});

const eventUpdate = (tx: SqlClient) => ({
  head: 'UPDATE events SET status = v.column2, deliveries_count = v.column3, deliveries_succeeded = v.column4, deliveries_failed = v.column5 FROM (',
  row: valuesRow(tx, ['varchar', 'varchar', 'integer', 'integer', 'integer']),
  tail: ') AS v WHERE events.id = v.column1',
});

const inList = (values: unknown[]) => values.map(() => '?').join(', ');

/**
 * Inserts the attempts not recorded yet whose delivery still exists (the event, and with it the delivery,
 * may have been deleted while the attempt was in flight); returns them.
 */
async function insertAttempts(tx: SqlClient, attempts: AttemptRecord[]): Promise<AttemptRecord[]> {
  const seen = new Set<string>();
  const unique = attempts.filter((a) => !seen.has(a.attemptId) && seen.add(a.attemptId));
  const rows = unique.map((a) => [a.attemptId, a.orgId, a.deliveryId, a.eventId, a.destinationId, a.attemptNumber, a.startedAt, a.completedAt,
    tx.bool(a.ok), a.statusCode, Math.round(a.latencyMs), a.error, a.errorKind, a.responseBody]);
  const inserted = new Set((await allForRows<{ id: string }>(tx, attemptInsert(tx), rows)).map((row) => row.id));
  return unique.filter((a) => inserted.has(a.attemptId));
}

/** Each delivery takes the state of its latest attempt among `attempts`, unless it already holds a later one. */
async function updateDeliveries(tx: SqlClient, attempts: AttemptRecord[]): Promise<void> {
  const latest = new Map<string, AttemptRecord>();
  for (const a of attempts) if ((latest.get(a.deliveryId)?.attemptNumber ?? 0) < a.attemptNumber) latest.set(a.deliveryId, a);
  const rows = [...latest.values()].map((a) => [a.deliveryId, a.deliveryStatus, a.attemptNumber, a.statusCode, a.error, a.ok ? Math.round(a.latencyMs) : null,
    a.nextAttemptAt, a.ok ? a.completedAt : null, a.completedAt]);
  await runForRows(tx, deliveryUpdate(tx), rows);
}

/** Sets the events' status and counters from their deliveries (also after a replay adds or drops some). */
export async function refreshEvents(tx: SqlClient, eventIds: string[]): Promise<void> {
  const ids = [...new Set(eventIds)].sort();
  if (ids.length === 0) return;
  // The events that exist, locked in id order, with their deliveries: one statement.
  const found = await tx.all(
    `SELECT e.id AS "eventId", d.id, d.destination_id AS "destinationId", d.status
     FROM (SELECT id FROM events WHERE id IN (${inList(ids)}) ORDER BY id${forUpdate(tx)}) AS e LEFT JOIN deliveries d ON d.event_id = e.id`,
    ids,
  );
  const byEvent = new Map<string, DeliveryState[]>();
  for (const { eventId, id, destinationId, status } of decodeRows(eventDeliveryRowSchema, 'deliveries', found)) {
    const states = byEvent.get(eventId) ?? [];
    byEvent.set(eventId, states);
    if (id !== null && destinationId !== null && status !== null) states.push({ id, destinationId, status });
  }
  if (byEvent.size === 0) return;
  const rows = [...byEvent].map(([eventId, states]) => [
    eventId,
    eventStatus(states),
    states.length,
    states.filter((d) => d.status === 'delivered').length,
    states.filter((d) => d.status === 'failed').length,
  ]);
  await runForRows(tx, eventUpdate(tx), rows);
}

/**
 * Writes a batch of attempts in one transaction: the attempt rows, each delivery's status, the status and
 * counters of every event they touch, destination statistics, issues and the auto-disable clock. Idempotent
 * on attempt ids (records are at least once): only newly inserted attempts count. Returns the destinations
 * the batch disabled, for the caller to announce.
 */
export async function recordAttempts(sql: SqlClient, attempts: AttemptRecord[]): Promise<DisabledDestination[]> {
  return sql.transaction(async (tx) => {
    const inserted = await insertAttempts(tx, attempts);
    await updateDeliveries(tx, inserted);
    await refreshEvents(tx, inserted.map((attempt) => attempt.eventId));
    await addDestinationStats(tx, inserted);
    return foldAttemptsIntoIssues(tx, inserted);
  });
}

/**
 * An attempt that cannot be written: its delivery ends `failed` and its event says why, so the event
 * settles instead of staying `pending` for an outcome that will never be recorded.
 */
export async function failUnrecordedAttempt(sql: SqlClient, attempt: AttemptRecord, detail: string): Promise<void> {
  await sql.transaction(async (tx) => {
    await tx.run(`UPDATE deliveries SET status = 'failed', last_error = ?, updated_at = ? WHERE id = ? AND status IN ('pending', 'retrying')`, [
      detail,
      attempt.completedAt,
      attempt.deliveryId,
    ]);
    await refreshEvents(tx, [attempt.eventId]);
    await tx.run('UPDATE events SET failure_reason = ? WHERE id = ?', [`An attempt could not be recorded: ${detail}`, attempt.eventId]);
  });
}
