import { expect } from 'chai';
import { newId } from '../../libs/ids/ids.js';
import { destinationTopic, encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { respond, startHttpSink, type HttpSink, type RecordedRequest } from '../../libs/testing/http-sink.js';
import { startDelivererHarness, type DelivererHarness } from './deliverer-test-harness.js';

const ANSWER_AFTER_MS = 200;

/** The most requests the sinks were answering at the same moment (each takes ANSWER_AFTER_MS). */
function mostAtOnce(requests: RecordedRequest[]): number {
  const edges = requests.flatMap((request) => [
    { at: request.receivedAt, change: 1 },
    { at: request.receivedAt + ANSWER_AFTER_MS, change: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.change - b.change);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.change));
  return most;
}

describe('deliverer: concurrency', function () {
  let h: DelivererHarness;
  let sinks: HttpSink[];

  afterEach(async function () {
    await h.close();
    for (const sink of sinks) await sink.close();
  });

  it('sends the jobs of different sources to one destination at the same time, and those of one source one after the other, in order', async function () {
    h = await startDelivererHarness();
    sinks = [await startHttpSink([respond(200, { delayMs: ANSWER_AFTER_MS })])];
    const destination = await h.addDestination({ url: sinks[0]!.url });
    const send = (bodies: string[], sourceId?: () => string) =>
      h.broker.producer().send(
        destinationTopic(destination.id),
        bodies.map((body) => encodeDeliveryJob(h.jobFor(destination.id, sourceId ? { sourceId: sourceId() } : {}), Buffer.from(body))),
      );
    await send(['{}', '{}', '{}', '{}'], () => newId('src'));
    await send(['{"n":1}', '{"n":2}', '{"n":3}']);

    await h.attempts.waitFor(7, (attempt) => attempt.destinationId === destination.id, 3000);
    const requests = [...sinks[0]!.requests];
    const ofSource = requests.filter((request) => request.headers['x-relay-source'] === 'shop-events');
    expect(ofSource.map((request) => request.body.toString())).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
    for (let n = 1; n < ofSource.length; n += 1) {
      expect(ofSource[n]!.receivedAt - ofSource[n - 1]!.receivedAt).to.be.at.least(ANSWER_AFTER_MS - 5);
    }
    expect(mostAtOnce(requests)).to.be.at.least(4);
  });

  it('keeps the requests in flight in the process within maxInFlight, across destinations', async function () {
    h = await startDelivererHarness({ maxInFlight: 2 });
    sinks = [await startHttpSink([respond(200, { delayMs: ANSWER_AFTER_MS })]), await startHttpSink([respond(200, { delayMs: ANSWER_AFTER_MS })])];
    for (const sink of sinks) {
      const destination = await h.addDestination({ url: sink.url });
      for (let n = 1; n <= 3; n += 1) await h.publishJob(destination.id, Buffer.from('{}'), { sourceId: newId('src') });
    }

    await h.attempts.waitFor(6, () => true, 5000);
    expect(mostAtOnce(sinks.flatMap((sink) => [...sink.requests]))).to.equal(2);
  });
});
