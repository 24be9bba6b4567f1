import { expect } from 'chai';
import { KafkaJsRequestQueue } from './kafkajs-request-queue.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const queue = () => new KafkaJsRequestQueue({ maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'spec', broker: 'localhost:9092', logger: quiet });

describe("kafkajs' request queue, as the relay runs it", function () {
  it('arms no timer while nothing waits to be sent (kafkajs 2.2.4 re-armed one every millisecond)', function () {
    const idle = queue();
    idle.scheduleCheckPendingRequests();
    expect(idle.throttleCheckTimeoutId).to.equal(null);
  });

  it('still checks again later while a request waits behind a throttle', function () {
    const throttled = queue();
    throttled.throttledUntil = Date.now() + 60_000;
    throttled.pending.push({ correlationId: 1 });
    try {
      throttled.scheduleCheckPendingRequests();
      expect(throttled.throttleCheckTimeoutId).to.not.equal(null);
    } finally {
      throttled.destroy();
    }
  });
});
