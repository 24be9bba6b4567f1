import { newId } from '../ids/ids.js';
import { refreshEvents } from './attempts.js';
import { runForRows } from '../store/rows-statement.js';
import type { SqlClient } from '../store/sql-client.js';

/** A destination an event is to be delivered to. */
export interface DeliveryTargetName {
  destinationId: string;
  destinationName: string;
}

export interface PendingDelivery extends DeliveryTargetName {
  id: string;
  orgId: string;
  eventId: string;
}

const DELIVERY_INSERT = {
  head: 'INSERT INTO deliveries (id, org_id, event_id, destination_id, destination_name, status, attempt_count, created_at, updated_at)',
  row: "(?, ?, ?, ?, ?, 'pending', 0, ?, ?)",
};

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
    created.flat().map((d) => [d.id, d.orgId, d.eventId, d.destinationId, d.destinationName, now, now]),
  );
  return created;
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
