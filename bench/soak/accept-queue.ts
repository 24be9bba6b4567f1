import { acceptQueueLength } from '../../libs/http/accept-queue.js';

/** What a rate's load left waiting in the kernel for the relay's `accept`: the deepest queue seen, and for how long any waited. */
export interface AcceptQueue {
  peak: number;
  waitingMs: number;
}

/** Samples the accept queue of `port` (libs/http/accept-queue.ts) every `intervalMs` until stopped. */
export function watchAcceptQueue(port: number, intervalMs = 200): { stop(): AcceptQueue } {
  const result: AcceptQueue = { peak: 0, waitingMs: 0 };
  const timer = setInterval(() => {
    const length = acceptQueueLength(port) ?? 0;
    result.peak = Math.max(result.peak, length);
    if (length > 0) result.waitingMs += intervalMs;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return result;
    },
  };
}
