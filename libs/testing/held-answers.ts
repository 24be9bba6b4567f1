import { respond, type RecordedRequest, type SinkBehaviour } from './http-sink.js';
import { waitFor } from './wait-for.js';

/**
 * Answers a test gives one at a time: the sinks that share it hold every request until the test releases
 * its answer. A spec can then say what a client started while N requests were unanswered, in steps,
 * without timing anything: a client that waits for answers starts nothing new until one is released.
 */
export class HeldAnswers {
  /** Every request the sinks got, in the order they arrived. */
  readonly received: RecordedRequest[] = [];
  private readonly held: { request: RecordedRequest; release: () => void }[] = [];
  private answeringAll = false;

  /** The behaviour of the sinks that share these answers: `status`, once released. */
  respondOnRelease(status = 200): SinkBehaviour {
    return (request) => {
      this.received.push(request);
      if (this.answeringAll) return respond(status);
      return respond(status, { after: new Promise<void>((release) => this.held.push({ request, release })) });
    };
  }

  /** Answers the request that has waited longest (of those `which` accepts), and returns it. */
  releaseOldest(which: (request: RecordedRequest) => boolean = () => true): RecordedRequest {
    const index = this.held.findIndex(({ request }) => which(request));
    if (index === -1) throw new Error('No such request is waiting for its answer');
    const [oldest] = this.held.splice(index, 1);
    oldest!.release();
    return oldest!.request;
  }

  /** Answers every waiting request, and every later one at once. */
  releaseAll(): void {
    this.answeringAll = true;
    for (const { release } of this.held.splice(0)) release();
  }

  /** Resolves with every request received once there are at least `count`. */
  waitForRequests(count: number, timeoutMs = 5000): Promise<readonly RecordedRequest[]> {
    return waitFor(`${count} requests at the sinks`, () => this.received, (received) => received.length >= count, timeoutMs, 10);
  }
}
