import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 (its last release) re-arms a 1 ms timer on every broker connection for as long as the
 * connection lives, once it has answered a request: `scheduleCheckPendingRequests` schedules a check of
 * the pending queue even when the queue is empty and nothing is throttled, and the check schedules the
 * next (kafkajs issue 1556, fixed in no release). That costs every process on Kafka CPU whether or not
 * webhooks flow. A check is needed only while requests wait (throttled, or too many in flight): with an
 * empty queue this returns, and `push` schedules again when a request has to wait.
 */
interface RequestQueue {
  pending: unknown[];
  scheduleCheckPendingRequests(): void;
}

const require = createRequire(import.meta.url);
const requestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueue };
const scheduleCheck = requestQueue.prototype.scheduleCheckPendingRequests;

requestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckWhileRequestsWait(this: RequestQueue) {
  if (this.pending.length > 0) scheduleCheck.call(this);
};

/** kafkajs' request queue, patched: for the spec that checks the patch holds. */
export const KafkaJsRequestQueue = requestQueue as unknown as new (options: {
  maxInFlightRequests: number | null;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  clientId: string;
  broker: string;
  logger: unknown;
}) => RequestQueue & { throttleCheckTimeoutId: unknown; throttledUntil: number; destroy(): void };
