import type { OutgoingMessage } from '../broker/broker.js';
import { tierFor } from '../delivery/retry-schedule.js';
import { sealedPayload } from '../payload/stored-payload.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { TransformedRequest } from '../transformations/route-transformations.js';
import { deliveryJobMessage, encodeDeliveryJob, type DeliveryJob } from './delivery-job.js';
import { retryTierTopic } from './topology.js';

/** What a route adds to its deliveries' first job: its transformation's request, its delay. */
export interface RouteJobPlan {
  transformationId?: string;
  transformed?: TransformedRequest;
  delaySeconds: number;
}

/**
 * A first attempt's message, as the router or a replay publishes it. A transformed request travels in
 * the job: its body as the record value (sealed when the event's is), its headers and content type in
 * place of the provider's. A route's delay makes the job due at the event's receipt plus the delay, and
 * sends it through the retry tiers until then (apps/deliverer/retry-tiers.ts): no sleep, nothing held up.
 */
export function firstAttemptMessage(job: DeliveryJob, body: Buffer, plan: RouteJobPlan | undefined, now: number, secrets: SecretBox): { topic: string; message: OutgoingMessage } {
  let [planned, value] = [job, body];
  if (plan?.transformed) {
    const { transformed } = plan;
    planned = { ...planned, contentType: transformed.contentType, providerHeaders: transformed.headers, transformationId: plan.transformationId };
    value = job.sealed ? sealedPayload(transformed.body, secrets).bytes : transformed.body;
  }
  const dueAt = plan && plan.delaySeconds > 0 ? job.receivedAt + plan.delaySeconds * 1000 : 0;
  if (dueAt <= now) return deliveryJobMessage(planned, value);
  return { topic: retryTierTopic(tierFor(dueAt - now)), message: encodeDeliveryJob({ ...planned, dueAt }, value) };
}
