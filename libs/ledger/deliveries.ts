import { newId } from '../ids/ids.js';
import { refreshEvents } from './attempts.js';
import { foldTransformationFailures } from '../issues/attempt-issues.js';
import { decodeRows } from '../store/row-schema.js';
import { runForRows } from '../store/rows-statement.js';
import { deliveryIdRowSchema } from './ledger-rows.js';
import type { SqlClient } from '../store/sql-client.js';
import type { TransformationReport } from '../transformations/route-transformations.js';

/** A destination an event is to be delivered to. */
export interface DeliveryTargetName {
  destinationId: string;
  destinationName: string;
  /** The transformation its request went through (libs/transformations/route-transformations.ts), if any. */
  report?: TransformationReport;
}

export interface PendingDelivery extends DeliveryTargetName {
  id: string;
  orgId: string;
  eventId: string;
}

const DELIVERY_INSERT = {
  head: 'INSERT INTO deliveries (id, org_id, event_id, destination_id, destination_name, status, attempt_count, transformation, created_at, updated_at)',
  row: "(?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)",
};

const FAILED_DELIVERY_INSERT = {
  head: 'INSERT INTO deliveries (id, org_id, event_id, destination_id, destination_name, status, attempt_count, failure_reason, last_error, transformation, created_at, updated_at)',
  row: "(?, ?, ?, ?, ?, 'failed', 0, 'transformation_failed', ?, ?, ?, ?)",
};

const reportJson = (report: TransformationReport | undefined) => (report ? JSON.stringify(report) : null);

/**
 * Creates the pending deliveries of events to their targets, in the caller's transaction: the one
 * writer of new delivery rows, for the router (an event's first deliveries) and replay (new ones).
 * Returns them in the order given, each with its new id.
 */
export async function createPendingDeliveries(
  tx: SqlClient,
  events: { orgId: string; eventId: string; targets: DeliveryTargetName[] }[],
  now: number,
): Promise<PendingDelivery[][]> {
  const created = events.map(({ orgId, eventId, targets }) => targets.map((target) => ({ id: newId('dlv'), orgId, eventId, ...target })));
  await runForRows(
    tx,
    DELIVERY_INSERT,
    created.flat().map((d) => [d.id, d.orgId, d.eventId, d.destinationId, d.destinationName, reportJson(d.report), now, now]),
  );
  return created;
}

/**
 * Deliveries whose transformation failed: created `failed` with `failureReason: "transformation_failed"`
 * and no attempt, in the caller's transaction; their events' status is computed again, and each counts in
 * its destination's `transformation` issue.
 */
export async function createTransformationFailures(
  tx: SqlClient,
  failures: { orgId: string; eventId: string; destinationId: string; destinationName: string; report: TransformationReport }[],
  now: number,
): Promise<void> {
  if (failures.length === 0) return;
  const errorOf = (f: (typeof failures)[number]) => `${f.report.error?.name}: ${f.report.error?.message}`;
  await runForRows(
    tx,
    FAILED_DELIVERY_INSERT,
    failures.map((f) => [newId('dlv'), f.orgId, f.eventId, f.destinationId, f.destinationName, errorOf(f), reportJson(f.report), now, now]),
  );
  await refreshEvents(tx, failures.map((f) => f.eventId));
  await foldTransformationFailures(tx, failures.map((f) => ({ destinationId: f.destinationId, eventId: f.eventId, error: errorOf(f) })), now);
}

/**
 * New pending deliveries of stored events (a replay), with their events back to `pending`, in one
 * transaction. Returns them in the order given, each with its new id.
 */
export function createReplayDeliveries(
  sql: SqlClient,
  events: { orgId: string; eventId: string; targets: DeliveryTargetName[] }[],
  now: number,
): Promise<PendingDelivery[][]> {
  return sql.transaction(async (tx) => {
    const created = await createPendingDeliveries(tx, events, now);
    for (const { eventId, targets } of events) {
      await tx.run("UPDATE events SET status = 'pending', deliveries_count = deliveries_count + ? WHERE id = ?", [targets.length, eventId]);
    }
    return created;
  });
}

/** Removes deliveries whose jobs were never queued, and recomputes their events, so nothing waits for them. */
export function removeUnqueuedDeliveries(sql: SqlClient, deliveries: Pick<PendingDelivery, 'id' | 'eventId'>[]): Promise<void> {
  return sql.transaction(async (tx) => {
    for (const { id } of deliveries) await tx.run('DELETE FROM deliveries WHERE id = ?', [id]);
    await refreshEvents(tx, [...new Set(deliveries.map(({ eventId }) => eventId))]);
  });
}

/**
 * Of these deliveries, the ones stored `delivered`: one statement, for a deliverer that reads jobs again
 * which a killed process may have sent already.
 */
export async function deliveredAmong(sql: SqlClient, deliveryIds: readonly string[]): Promise<Set<string>> {
  if (deliveryIds.length === 0) return new Set();
  const rows = await sql.all(`SELECT id FROM deliveries WHERE id IN (${deliveryIds.map(() => '?').join(', ')}) AND status = 'delivered'`, [...deliveryIds]);
  return new Set(decodeRows(deliveryIdRowSchema, 'deliveries', rows).map((row) => row.id));
}
