import { expect } from 'chai';
import type { Message } from 'kafkajs';
import { requestsOfBoundedSize } from './kafka-producer.js';

const message = (bytes: number, key = 'k'): Message => ({ key, value: Buffer.alloc(bytes) });

describe('requestsOfBoundedSize', () => {
  it('keeps small sends together in one request', () => {
    const requests = requestsOfBoundedSize([{ topic: 'a', messages: [message(10), message(10)] }, { topic: 'b', messages: [message(10)] }], 1000);
    expect(requests).to.have.length(1);
    expect(requests[0]!.map((r) => [r.topic, r.messages.length])).to.deep.equal([['a', 2], ['b', 1]]);
  });

  it('when two large records would exceed the limit together, sends them in separate requests, in order', () => {
    const first = message(600, 'first');
    const second = message(600, 'second');
    const requests = requestsOfBoundedSize([{ topic: 'a', messages: [first, second] }], 1000);
    expect(requests.map((r) => r[0]!.messages[0]!.key)).to.deep.equal(['first', 'second']);
  });

  it('sends a record larger than the limit on its own', () => {
    const requests = requestsOfBoundedSize([{ topic: 'a', messages: [message(10), message(5000), message(10)] }], 1000);
    expect(requests.map((r) => r[0]!.messages.length)).to.deep.equal([1, 1, 1]);
  });
});
