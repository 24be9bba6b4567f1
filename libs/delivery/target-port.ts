import type { AttemptOutcome } from './attempt-outcome.js';
import type { DeliveryRequest } from './build-request.js';
import type { DeliveryTarget } from './delivery-lookup.js';
import type { HttpSender } from './send-request.js';

/**
 * The deliverer's sending port: "send this job to this target and say what happened". One
 * implementation per destination type; the deliverer knows none of them.
 */
/** Which job an attempt is: a queue message's key and deduplication id are made from it. */
export interface AttemptContext {
  deliveryId: string;
  attemptNumber: number;
  eventId: string;
  sourceId: string;
}

export interface TargetSender {
  /** Never rejects: every failure is an outcome. `target.timeoutMs` bounds the wait for the answer. */
  send(request: DeliveryRequest, target: DeliveryTarget, context: AttemptContext): Promise<AttemptOutcome>;
  /** Closes what is kept open for the destination (a changed or deleted one connects afresh). */
  forget(destinationId: string): Promise<void>;
  close(): Promise<void>;
}

/** HTTP destinations: the request as built, over the sender's keep-alive pools (kept per origin, not per destination). */
export function httpTargetSender(sender: HttpSender): TargetSender {
  return {
    send: (request, target) => sender.send(request, { timeoutMs: target.timeoutMs }),
    // Pools are per origin and close themselves when idle; nothing is kept per destination.
    forget: () => Promise.resolve(),
    close: () => sender.close(),
  };
}
