import type { DeliveryStatus } from '../pipeline/attempt-record.js';

export type EventStatus = 'pending' | 'delivered' | 'partial' | 'failed';

export interface DeliveryState {
  destinationId: string;
  status: DeliveryStatus;
  /** Creation order: a replay's delivery supersedes the earlier one to the same destination. */
  id: string;
}

/**
 * DESIGN "Delivery and event states": pending while any latest delivery (one per destination) is
 * pending or retrying; then delivered (all delivered, or none), partial (some failed), failed (all).
 */
export function eventStatus(deliveries: DeliveryState[]): EventStatus {
  const latest = new Map<string, DeliveryState>();
  for (const delivery of deliveries) {
    const current = latest.get(delivery.destinationId);
    if (!current || current.id < delivery.id) latest.set(delivery.destinationId, delivery);
  }
  const states = [...latest.values()].map((d) => d.status);
  if (states.some((s) => s === 'pending' || s === 'retrying')) return 'pending';
  const failed = states.filter((s) => s === 'failed').length;
  if (failed === 0) return 'delivered';
  return failed === states.length ? 'failed' : 'partial';
}
