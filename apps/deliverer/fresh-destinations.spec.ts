import { expect } from 'chai';
import { partitionFor } from '../../libs/broker/partitioner.js';
import { deliveryJobMessage, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { hang, respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { eachTestDelivererAndSink, type DelivererHarness } from '../../libs/testing/deliverer-harness.js';
import { FRESH_DESTINATIONS_PARTITIONS, FRESH_DESTINATIONS_TOPIC } from '../../libs/pipeline/topology.js';

/** Publishes a first attempt to relay.fresh, as the router does for a destination created just now. */
async function publishFreshJob(h: DelivererHarness, destinationId: string, overrides: Partial<DeliveryJob> = {}): Promise<DeliveryJob> {
  const job = h.jobFor(destinationId, { destinationCreatedAt: Date.now(), ...overrides });
  const { topic, message } = deliveryJobMessage(job, Buffer.from(JSON.stringify({ deliveryId: job.deliveryId })), Date.now());
  expect(topic).to.equal(FRESH_DESTINATIONS_TOPIC);
  await h.broker.producer().send(topic, [message]);
  return job;
}

const freshPartitionOf = (destinationId: string) => partitionFor(destinationId, FRESH_DESTINATIONS_PARTITIONS);

describe('deliverer: new destinations through relay.fresh', function () {
  const t = eachTestDelivererAndSink();
  let hanging: HttpSink;

  beforeEach(async function () {
    hanging = await startHttpSink([hang()]);
  });
  afterEach(async function () {
    await hanging.close();
  });

  it('does not hold up a new destination behind a hanging one on the same relay.fresh partition', async function () {
    const slow = await t.h.addDestination({ url: hanging.url, timeoutMs: 3000 });
    // Records of relay.fresh are keyed by destination: made until one shares the hanging one's partition.
    let healthy = await t.h.addDestination({ url: t.sink.url });
    while (freshPartitionOf(healthy.id) !== freshPartitionOf(slow.id)) healthy = await t.h.addDestination({ url: t.sink.url });

    await publishFreshJob(t.h, slow.id);
    await hanging.waitForRequests(1, 2000);
    const publishedAt = Date.now();
    const job = await publishFreshJob(t.h, healthy.id);
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1, 2000);

    expect(attempt).to.include({ deliveryStatus: 'delivered' });
    // Well before the hanging request's timeout (3 s), which is what waiting behind it would cost.
    expect(t.sink.requests[0]!.receivedAt - publishedAt).to.be.below(1000);
  });

  it('sends each job once: the copy in its own topic is dropped when relay.fresh made the attempt', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const jobs: DeliveryJob[] = [];
    for (let n = 0; n < 20; n += 1) jobs.push(await publishFreshJob(t.h, destination.id));
    await t.h.attempts.waitFor(20, (attempt) => attempt.destinationId === destination.id);
    // Behind the copies in the destination's own topic (same source key, same partition): once it is
    // delivered, every copy before it has been read.
    const last = await t.h.publishJob(destination.id, Buffer.from('{"last":true}'));
    await t.h.attemptsOf(last.deliveryId, 1);

    const sent = t.sink.requests.map((request) => JSON.parse(request.body.toString()).deliveryId as string | undefined);
    expect(sent.filter(Boolean).sort()).to.deep.equal(jobs.map((job) => job.deliveryId).sort());
  });

  it('sends from its own topic the jobs relay.fresh could not attempt: those of a disabled destination, once enabled', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url, enabled: false });
    const job = await publishFreshJob(t.h, destination.id);

    await t.h.store.destinations.update(t.h.orgId, destination.id, { enabled: true });
    await t.h.announce({ kind: 'destination', action: 'updated', orgId: t.h.orgId, id: destination.id });
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    expect(t.sink.requests).to.have.length(1);
  });

  it('waits, when stopping, for the answers of attempts started from relay.fresh', async function () {
    const slow = await startHttpSink([respond(200, { delayMs: 400 })]);
    try {
      const destination = await t.h.addDestination({ url: slow.url });
      const job = await publishFreshJob(t.h, destination.id);
      await slow.waitForRequests(1, 2000);
      await t.h.deliverer.stop();
      // Published before the stop resolved: read back at once.
      const [attempt] = await t.h.attemptsOf(job.deliveryId, 1, 1000);
      expect(attempt).to.include({ deliveryStatus: 'delivered', statusCode: 200 });
    } finally {
      await slow.close();
    }
  });
});
