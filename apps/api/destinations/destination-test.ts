import { z } from 'zod';
import { buildDeliveryRequest } from '../../../libs/delivery/build-request.js';
import { NotFoundError } from '../../../libs/errors/errors.js';
import { newId } from '../../../libs/ids/ids.js';
import { createStoreDeliveryLookup } from '../../../libs/delivery/store-lookup.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';

export const destinationTestBody = z.strictObject({ payload: z.record(z.string(), z.unknown()).optional() });

/** The most of a destination's answer a test shows: enough to see what answered, too little to read a service through it. */
export const TEST_ANSWER_BODY_BYTES = 1024;

/** Sent in place of X-Relay-Source, as a test belongs to no source. */
const TEST_SOURCE = 'relay-test';

function sampleEvent(eventId: string, now: number) {
  return {
    id: eventId,
    type: 'relay.test',
    createdAt: new Date(now).toISOString(),
    data: { message: 'A test webhook from the relay. It is not stored, and it is not retried.' },
  };
}

/**
 * One real request to the destination (for a queue type, one message published to its target), built
 * and sent exactly as a delivery (method, headers, auth, signature, timeout), plus `X-Relay-Test: true`. Recorded nowhere. A non-2xx answer, a timeout or a
 * network error is a failed test, never an error of this endpoint.
 */
export async function testDestination(deps: ApiDeps, tenant: Tenant, id: string, payload?: Record<string, unknown>) {
  const target = await createStoreDeliveryLookup(deps.store, deps.secrets).destination(tenant.org.id, id);
  if (!target) throw new NotFoundError(`Destination ${id} not found`);
  const eventId = newId('evt');
  const deliveryId = newId('dlv');
  const request = buildDeliveryRequest({
    destination: target.destination,
    event: {
      eventId,
      sourceId: TEST_SOURCE,
      sourceSlug: TEST_SOURCE,
      rawBody: Buffer.from(JSON.stringify(payload ?? sampleEvent(eventId, deps.now()))),
      contentType: 'application/json',
      providerHeaders: {},
      signatureValid: true,
    },
    deliveryId,
    attemptNumber: 1,
    nowMs: deps.now(),
  });
  request.headers['X-Relay-Test'] = 'true';
  const outcome = await deps.testSender.send(request, target, { deliveryId, attemptNumber: 1, eventId, sourceId: TEST_SOURCE });
  if (outcome.ok) {
    return {
      success: true,
      statusCode: outcome.statusCode,
      latency: outcome.latencyMs,
      responseBody: outcome.responseBody,
      message: target.queue ? `The ${target.queue.type} target acknowledged the test message` : `The destination answered ${outcome.statusCode}`,
    };
  }
  let message = 'The destination could not be reached';
  if (outcome.errorKind === 'timeout') message = `The destination did not answer within ${target.timeoutMs} ms`;
  else if (outcome.errorKind === 'http_status') message = `The destination answered ${outcome.statusCode}`;
  else if (outcome.errorKind === 'rejected') message = `The ${target.queue?.type ?? ''} target refused the test message`;
  // null when no HTTP answer arrived, as in deliveries and timelines (docs/decisions/0033-statistics-replay-retention.md).
  return { success: false, statusCode: outcome.statusCode ?? null, latency: outcome.latencyMs, error: outcome.error ?? message, message };
}
