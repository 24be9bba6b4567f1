import type { DeliveryDestination } from './build-request.js';
import type { RetryPolicy } from './retry-schedule.js';
import type { Ordering } from '../store/entities/destination.js';
import type { QueueTarget } from '../destinations/queue-target.js';

/** A destination as the deliverer needs it: credentials and signing secret already opened. */
export interface DeliveryTarget {
  id: string;
  orgId: string;
  enabled: boolean;
  /** The HTTP settings; for a queue type its headers and signing secret make the message's headers (its `url` is unused). */
  destination: DeliveryDestination;
  /** The opened queue target, null for an HTTP destination. */
  queue: QueueTarget | null;
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
