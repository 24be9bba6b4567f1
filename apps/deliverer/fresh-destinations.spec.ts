import { expect } from 'chai';
import { partitionFor } from '../../libs/broker/partitioner.js';
import { newId } from '../../libs/ids/ids.js';
import { deliveryJobMessage, encodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { consumedAll, destinationSettled } from '../../libs/testing/consumer-lag.js';
import { hang, respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { eachTestDelivererAndSink, type DelivererHarness } from '../../libs/testing/deliverer-harness.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import {
  DELIVERER_GROUP,
  DESTINATION_PARTITIONS,
  destinationTopic,
  FRESH_DESTINATIONS_PARTITIONS,
  FRESH_DESTINATIONS_TOPIC,
  RETRY_GROUP,
  RETRY_TIER_TOPICS,
} from '../../libs/pipeline/topology.js';
import { createHandedOverAttempts } from '../../libs/store/handed-over-attempts.js';
import { HANDED_OVER_HEADER, handOverDeadline, handOverKey } from './handed-over-jobs.js';

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

  it('hands a job over once: read again from relay.fresh after its copy was dropped, it is known by its mark', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = await publishFreshJob(t.h, destination.id);
    await t.h.attemptsOf(job.deliveryId, 1);
    // Its copy read and dropped, its attempt marked: the process no longer holds the job, the store does.
    await waitFor('the copy read', () => consumedAll(t.h.broker.admin(), DELIVERER_GROUP, [destinationTopic(destination.id)]), isTrue, 5000, 10);
    await waitFor('the attempt marked', async () => (await createHandedOverAttempts(t.h.store.sql).attempted([handOverKey(job)])).size === 1, isTrue, 5000, 10);

    // The same record again, as after a rebalance before relay.fresh's commit; then a later job of the destination.
    await publishFreshJob(t.h, destination.id, job);
    const later = await publishFreshJob(t.h, destination.id, { sourceId: job.sourceId });
    await t.h.attemptsOf(later.deliveryId, 1);
    await waitFor('the later copy read', () => consumedAll(t.h.broker.admin(), DELIVERER_GROUP, [destinationTopic(destination.id)]), isTrue, 5000, 10);

    const sent = t.sink.requests.map((request) => JSON.parse(request.body.toString()).deliveryId as string);
    expect(sent).to.deep.equal([job.deliveryId, later.deliveryId]);
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

describe('deliverer: copies of jobs handed over by another deliverer', function () {
  // The deliverers' and the log's clock, so a copy's second look comes when the test moves time past its deadline.
  let timers: ManualTimers;
  const t = eachTestDelivererAndSink(() => {
    timers = new ManualTimers(Date.now());
    return { now: timers.now, schedule: timers.schedule };
  });

  /** A source id for each partition of a destination topic (copies are keyed by source). */
  function sourceOnEachPartition(): string[] {
    const sources = new Map<number, string>();
    while (sources.size < DESTINATION_PARTITIONS) {
      const id = newId('src');
      sources.set(partitionFor(id, DESTINATION_PARTITIONS), id);
    }
    return [...sources.values()];
  }

  it('sends each job once when the copies are read by the deliverer that did not hand them over', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const topic = destinationTopic(destination.id);
    // Both in each group: relay.fresh's partition goes to one, the destination topic's partitions are shared,
    // so the copies of some sources are read by the deliverer that did not attempt their originals.
    const another = await t.h.startAnotherDeliverer();
    const jobs: DeliveryJob[] = [];
    for (const sourceId of sourceOnEachPartition()) {
      for (let n = 0; n < 2; n += 1) jobs.push(await publishFreshJob(t.h, destination.id, { sourceId, sourceSlug: 'shop-events' }));
    }
    await t.h.attempts.waitFor(jobs.length, (attempt) => attempt.destinationId === destination.id);
    // Every copy read: dropped, sent, or moved to a retry tier to be looked at again at its deadline.
    await waitFor('the copies read', () => consumedAll(t.h.broker.admin(), DELIVERER_GROUP, [topic]), isTrue, 5000, 10);
    timers.advance(handOverDeadline(0, destination.timeoutMs));
    await waitFor('the copies looked at again', () => destinationSettled(t.h.broker.admin(), destination.id), isTrue, 5000, 10);

    const sent = t.sink.requests.map((request) => JSON.parse(request.body.toString()).deliveryId as string);
    expect(sent.sort()).to.deep.equal(jobs.map((job) => job.deliveryId).sort());
    expect(t.h.requestsSent(t.h.deliverer) + t.h.requestsSent(another)).to.equal(jobs.length);
    const attempts = t.h.attempts.items.filter((attempt) => attempt.destinationId === destination.id);
    expect(attempts).to.have.length(jobs.length);
  });

  it('sends a copy whose original was never attempted (its deliverer died after handing it over) at its deadline, not before', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const topic = destinationTopic(destination.id);
    const job = t.h.jobFor(destination.id);
    const handedOverAt = timers.now();
    const copy = encodeDeliveryJob(job, Buffer.from(JSON.stringify({ deliveryId: job.deliveryId })));
    await t.h.broker.producer().send(topic, [{ ...copy, headers: { ...copy.headers, [HANDED_OVER_HEADER]: String(handedOverAt) } }]);
    await waitFor('the copy read', () => consumedAll(t.h.broker.admin(), DELIVERER_GROUP, [topic]), isTrue, 5000, 10);
    expect(await consumedAll(t.h.broker.admin(), RETRY_GROUP, RETRY_TIER_TOPICS), 'waiting in a retry tier').to.equal(false);
    expect(t.sink.requests).to.have.length(0);

    timers.advance(handOverDeadline(0, destination.timeoutMs));
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered', startedAt: handOverDeadline(handedOverAt, destination.timeoutMs) });
    expect(t.sink.requests).to.have.length(1);
  });
});
