import type { DeliveryDestination } from './build-request.js';
import type { RetryPolicy } from './retry-schedule.js';
import type { Ordering } from '../store/entities/destination.js';

/** A destination as the deliverer needs it: credentials and signing secret already opened. */
export interface DeliveryTarget {
  id: string;
  orgId: string;
  enabled: boolean;
  destination: DeliveryDestination;
  timeoutMs: number;
  rateLimitPerMinute: number | null;
  retryPolicy: RetryPolicy;
  ordering: Ordering;
}

/** What the deliverer reads from configuration; the composition root passes one over the store. */
export interface DeliveryLookup {
  /** null when the destination does not exist (deleted). */
  destination(orgId: string, destinationId: string): Promise<DeliveryTarget | null>;
  /** The source's slug, sent as X-Relay-Source; null when the source is gone. */
  sourceSlug(orgId: string, sourceId: string): Promise<string | null>;
}
