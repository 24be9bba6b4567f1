import { expect } from 'chai';
import { newId } from '../../libs/ids/ids.js';
import { encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { createLogger } from '../../libs/logging/logger.js';
import { respond, startHttpSink, type HttpSink, type RecordedRequest } from '../../libs/testing/http-sink.js';
import { createDeliverer } from './deliverer.js';
import { startDelivererHarness, type DelivererHarness } from '../../libs/testing/deliverer-harness.js';
import { createHandedOverAttempts } from '../../libs/store/handed-over-attempts.js';
import { createSqlSourceLines } from './source-lines.js';
import { createStoreDeliveryLookup } from '../../libs/delivery/store-lookup.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';

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

  /** Publishes jobs for `destinationId` in one send, so the deliverer gets them as one batch. */
  const publishBatch = (destinationId: string, bodies: string[], sourceId?: () => string) =>
    h.broker.producer().send(
      destinationTopic(destinationId),
      bodies.map((body) => encodeDeliveryJob(h.jobFor(destinationId, sourceId ? { sourceId: sourceId() } : {}), Buffer.from(body))),
    );

  it('starts up to W first attempts of one source at once, in offset order, each as soon as an earlier one is answered', async function () {
    h = await startDelivererHarness({ maxInFlightPerSource: 3 });
    sinks = [await startHttpSink([respond(200, { delayMs: ANSWER_AFTER_MS })])];
    const destination = await h.addDestination({ url: sinks[0]!.url });
    await publishBatch(destination.id, Array.from({ length: 7 }, (_, index) => `{"n":${index + 1}}`));

    await h.attempts.waitFor(7, (attempt) => attempt.destinationId === destination.id, 3000);
    const requests = [...sinks[0]!.requests];
    expect(mostAtOnce(requests)).to.equal(3);
    // Three at once, then each answer lets the next one in: waves of jobs 1-3, 4-6 and 7, an answer apart.
    const firstAt = Math.min(...requests.map((request) => request.receivedAt));
    const waveOf = (request: RecordedRequest) => Math.floor((request.receivedAt - firstAt + ANSWER_AFTER_MS / 2) / ANSWER_AFTER_MS);
    const jobsOfWave = (wave: number) =>
      requests.filter((request) => waveOf(request) === wave).map((request) => JSON.parse(request.body.toString()).n as number).sort((a, b) => a - b);
    const waves = [0, 1, 2].map(jobsOfWave);
    expect(waves).to.deep.equal([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it('with a window of 1, the next first attempt of a source waits for the previous answer, while other sources are sent at the same time', async function () {
    h = await startDelivererHarness({ maxInFlightPerSource: 1 });
    sinks = [await startHttpSink([respond(200, { delayMs: ANSWER_AFTER_MS })])];
    const destination = await h.addDestination({ url: sinks[0]!.url });
    await publishBatch(destination.id, ['{}', '{}', '{}', '{}'], () => newId('src'));
    await publishBatch(destination.id, ['{"n":1}', '{"n":2}', '{"n":3}']);

    await h.attempts.waitFor(7, (attempt) => attempt.destinationId === destination.id, 3000);
    const requests = [...sinks[0]!.requests];
    const ofSource = requests.filter((request) => request.headers['x-relay-source'] === 'shop-events');
    expect(ofSource.map((request) => request.body.toString())).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
    for (let n = 1; n < ofSource.length; n += 1) {
      expect(ofSource[n]!.receivedAt - ofSource[n - 1]!.receivedAt).to.be.at.least(ANSWER_AFTER_MS - 5);
    }
    expect(mostAtOnce(requests)).to.be.at.least(4);
  });

  it('refuses a window per source larger than the places per destination', async function () {
    h = await startDelivererHarness();
    sinks = [];
    const sender = createHttpSender({ blockPrivateDestinations: false });
    try {
      const options = {
        broker: h.broker,
        lookup: createStoreDeliveryLookup(h.store, h.secrets),
        secrets: h.secrets,
        sender,
        metrics: h.metrics,
        gone: h.gone,
        lines: createSqlSourceLines(h.store.sql),
        handedOverAttempts: createHandedOverAttempts(h.store.sql),
        logger: createLogger({ level: 'silent' }),
        jitter: 0,
      };
      expect(() => createDeliverer({ ...options, maxInFlightPerDestination: 4, maxInFlightPerSource: 5 })).to.throw(RangeError, /maxInFlightPerSource/);
      expect(() => createDeliverer({ ...options, maxInFlightPerSource: 0 })).to.throw(RangeError, /maxInFlightPerSource/);
    } finally {
      await sender.close();
    }
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
