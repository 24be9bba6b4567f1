import { createRelayTracer } from '../../libs/tracing/relay-tracer.js';
import { expect } from 'chai';
import { newId } from '../../libs/ids/ids.js';
import { encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { httpTargetSender } from '../../libs/delivery/target-port.js';
import { createLogger } from '../../libs/logging/logger.js';
import { startHttpSink, type HttpSink, type RecordedRequest } from '../../libs/testing/http-sink.js';
import { HeldAnswers } from '../../libs/testing/held-answers.js';
import { createDeliverer } from './deliverer.js';
import { startDelivererHarness, type DelivererHarness } from '../../testing/deliverer-harness.js';
import { createSqlSourceLines } from '../../libs/ordering/source-lines.js';
import { createStoreDeliveryLookup } from '../../libs/delivery/store-lookup.js';
import { DELIVERER_GROUP, DESTINATION_PARTITIONS, destinationTopic } from '../../libs/pipeline/topology.js';
import { partitionFor } from '../../libs/broker/partitioner.js';
import { waitFor } from '../../libs/testing/wait-for.js';

/** The job number a request carries (`{"n": ...}` bodies). */
const jobOf = (request: RecordedRequest) => (JSON.parse(request.body.toString()) as { n?: number }).n;

describe('deliverer: concurrency', function () {
  let h: DelivererHarness;
  let sinks: HttpSink[];

  afterEach(async function () {
    await h.close();
    for (const sink of sinks) await sink.close();
  });

  /** Publishes jobs for `destinationId` in one send, so the deliverer gets them as one batch (per partition). */
  const publishBatch = (destinationId: string, jobs: { body: string; sourceId?: string }[]) =>
    h.broker.producer().send(
      destinationTopic(destinationId),
      jobs.map(({ body, sourceId }) => encodeDeliveryJob(h.jobFor(destinationId, sourceId ? { sourceId } : {}), Buffer.from(body))),
    );

  it('starts up to W first attempts of one source at once, in offset order, each once an earlier one is answered', async function () {
    h = await startDelivererHarness({ maxInFlightPerSource: 3 });
    const answers = new HeldAnswers();
    sinks = [await startHttpSink(answers.respondOnRelease())];
    const destination = await h.addDestination({ url: sinks[0]!.url });
    await publishBatch(destination.id, Array.from({ length: 7 }, (_, index) => ({ body: `{"n":${index + 1}}` })));

    // Three at once (their order on the wire is the connections'), then one more per answer, in order.
    const firstThree = await answers.waitForRequests(3);
    expect(firstThree.map(jobOf).sort()).to.deep.equal([1, 2, 3]);
    for (let answered = 1; answered <= 4; answered += 1) {
      answers.releaseOldest();
      const received = await answers.waitForRequests(3 + answered);
      expect(received.map(jobOf), `after ${answered} answers`).to.have.length(3 + answered);
      expect(jobOf(received.at(-1)!)).to.equal(3 + answered);
    }
    answers.releaseAll();
    await h.attempts.waitFor(7, (attempt) => attempt.destinationId === destination.id, 5000);
  });

  it('sends a job once when a copy of it on another partition is read at the same time (a rebalance, the router sending again)', async function () {
    h = await startDelivererHarness();
    const answers = new HeldAnswers();
    sinks = [await startHttpSink(answers.respondOnRelease())];
    const destination = await h.addDestination({ url: sinks[0]!.url });

    // Read in one round, both copies pass the first look before either is sent: the second must look again.
    const job = h.jobFor(destination.id);
    const own = partitionFor(job.sourceId, DESTINATION_PARTITIONS);
    const otherKey = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].find((key) => partitionFor(key, DESTINATION_PARTITIONS) !== own)!;
    const copy = encodeDeliveryJob(job, Buffer.from('{"n":1}'));
    await h.broker.producer().send(destinationTopic(destination.id), [copy, { ...copy, key: otherKey }]);
    await answers.waitForRequests(1);
    answers.releaseAll();

    await waitFor('every job committed', async () => (await h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destination.id)])).reduce((sum, partition) => sum + partition.lag, 0), (lag) => lag === 0, 5000, 10);
    expect(answers.received.map(jobOf)).to.deep.equal([1]);
    expect(await h.attemptsOf(job.deliveryId, 1)).to.have.length(1);
  });

  it('with a window of 1, the next first attempt of a source waits for the previous answer, while other sources are sent at the same time', async function () {
    h = await startDelivererHarness({ maxInFlightPerSource: 1 });
    const answers = new HeldAnswers();
    sinks = [await startHttpSink(answers.respondOnRelease())];
    const destination = await h.addDestination({ url: sinks[0]!.url });
    // One batch: a partition's next batch waits until every request of the previous one is answered.
    await publishBatch(destination.id, [
      ...Array.from({ length: 4 }, () => ({ body: '{}', sourceId: newId('src') })),
      ...[1, 2, 3].map((n) => ({ body: `{"n":${n}}` })),
    ]);

    // Four other sources and the first job of this one, all unanswered at once.
    const isOfSource = (request: RecordedRequest) => request.headers['x-relay-source'] === 'shop-events';
    const jobsOfSource = (requests: readonly RecordedRequest[]) => requests.filter(isOfSource).map(jobOf);
    expect(jobsOfSource(await answers.waitForRequests(5))).to.deep.equal([1]);
    expect(answers.received).to.have.length(5);
    // Each answer of the source lets its next job in, and nothing else.
    for (let answered = 1; answered <= 2; answered += 1) {
      answers.releaseOldest(isOfSource);
      const received = await answers.waitForRequests(5 + answered);
      expect(received, `after ${answered} answers`).to.have.length(5 + answered);
      expect(jobsOfSource(received)).to.deep.equal(Array.from({ length: answered + 1 }, (_, index) => index + 1));
    }
    answers.releaseAll();
    await h.attempts.waitFor(7, (attempt) => attempt.destinationId === destination.id, 5000);
  });

  it("commits a batch's jobs as the answers complete a prefix of it, so a crash would send again only what is unanswered or behind it", async function () {
    h = await startDelivererHarness();
    const answers = new HeldAnswers();
    sinks = [await startHttpSink(answers.respondOnRelease())];
    const destination = await h.addDestination({ url: sinks[0]!.url });
    await publishBatch(destination.id, [1, 2, 3, 4].map((n) => ({ body: `{"n":${n}}` })));
    const committed = async () => (await h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destination.id)])).find((partition) => partition.end !== '0')?.committed;
    const answer = async (n: number) => {
      const request = answers.releaseOldest((held) => jobOf(held) === n);
      await h.attemptsOf(String(request.headers['x-relay-delivery-id']), 1);
    };
    await answers.waitForRequests(4);

    // Answered behind an unanswered job: not committed yet.
    await answer(2);
    expect(await committed()).to.equal('-1');
    await answer(1);
    await waitFor('the first two jobs committed', committed, (offset) => offset === '2', 5000, 10);
    await answer(4);
    expect(await committed()).to.equal('2');
    await answer(3);
    await waitFor('the whole batch committed', committed, (offset) => offset === '4', 5000, 10);
  });

  it('refuses a window per source larger than the places per destination', async function () {
    h = await startDelivererHarness();
    sinks = [];
    const sender = httpTargetSender(createHttpSender({ blockPrivateDestinations: false }));
    try {
      const options = {
        broker: h.broker,
        destinations: {
          lookup: createStoreDeliveryLookup(h.store, h.secrets),
          secrets: h.secrets,
          gone: h.gone,
          lines: createSqlSourceLines(h.store.sql, h.deadLetters),
          delivered: async () => new Set<string>(),
        },
        retries: { jitter: 0 },
        observe: { metrics: h.metrics, logger: createLogger({ level: 'silent' }), tracer: createRelayTracer({ serviceName: 'deliverer-concurrency-spec', sampleRatio: 1 }) },
      };
      expect(() => createDeliverer({ ...options, sending: { sender, maxInFlightPerDestination: 4, maxInFlightPerSource: 5 } })).to.throw(RangeError, /maxInFlightPerSource/);
      expect(() => createDeliverer({ ...options, sending: { sender, maxInFlightPerSource: 0 } })).to.throw(RangeError, /maxInFlightPerSource/);
    } finally {
      await sender.close();
    }
  });

  it('keeps the requests in flight in the process within maxInFlight, across destinations', async function () {
    h = await startDelivererHarness({ maxInFlight: 2 });
    const answers = new HeldAnswers();
    sinks = [await startHttpSink(answers.respondOnRelease()), await startHttpSink(answers.respondOnRelease())];
    for (const sink of sinks) {
      const destination = await h.addDestination({ url: sink.url });
      for (let n = 1; n <= 3; n += 1) await h.publishJob(destination.id, Buffer.from('{}'), { sourceId: newId('src') });
    }

    await answers.waitForRequests(2);
    for (let answered = 1; answered <= 4; answered += 1) {
      answers.releaseOldest();
      expect(await answers.waitForRequests(2 + answered), `after ${answered} answers`).to.have.length(2 + answered);
    }
    answers.releaseAll();
    await h.attempts.waitFor(6, () => true, 5000);
  });
});
