import { expect } from 'chai';
import { partitionFor } from '../../libs/broker/partitioner.js';
import { deliveryJobMessage, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { consumedAll } from '../../libs/testing/consumer-lag.js';
import { hang, respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { eachTestDelivererAndSink, type DelivererHarness } from '../../testing/deliverer-harness.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import { DELIVERER_GROUP, destinationTopic, LANES_GROUP, LANES_PARTITIONS, LANES_TOPIC } from '../../libs/pipeline/topology.js';
import { DEAD_REASON_HEADER } from '../../libs/pipeline/dead-letter.js';
import type { BrokerRecord, RecordBatch } from '../../libs/broker/broker.js';
import { createLaneJobsHandler } from './lane-jobs.js';

/** Publishes a first attempt to the lanes, as the router does on Kafka for a destination without ordering. */
async function publishLaneJob(h: DelivererHarness, destinationId: string, overrides: Partial<DeliveryJob> = {}): Promise<DeliveryJob> {
  const job = h.jobFor(destinationId, { laned: true, ...overrides });
  const { topic, message } = deliveryJobMessage(job, Buffer.from(JSON.stringify({ deliveryId: job.deliveryId })));
  expect(topic).to.equal(LANES_TOPIC);
  await h.broker.producer().send(topic, [message]);
  return job;
}

const lanePartitionOf = (destinationId: string) => partitionFor(destinationId, LANES_PARTITIONS);

async function laneLag(h: DelivererHarness, partition: number): Promise<number> {
  return (await h.broker.admin().lag(LANES_GROUP, [LANES_TOPIC])).find((entry) => entry.partition === partition)?.lag ?? 0;
}

async function jobsInOwnTopic(h: DelivererHarness, destinationId: string): Promise<number> {
  return (await h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destinationId)])).reduce((sum, entry) => sum + Number(entry.end), 0);
}

describe('deliverer: the lanes', function () {
  const t = eachTestDelivererAndSink();
  let hanging: HttpSink;

  beforeEach(async function () {
    hanging = await startHttpSink([hang()]);
  });
  afterEach(async function () {
    await hanging.close();
  });

  /** A destination of the sink whose lane partition is the one of `other`. */
  async function onSamePartitionAs(other: string) {
    let destination = await t.h.addDestination({ url: t.sink.url });
    while (lanePartitionOf(destination.id) !== lanePartitionOf(other)) destination = await t.h.addDestination({ url: t.sink.url });
    return destination;
  }

  it('does not hold up a destination behind a hanging one on the same lane partition', async function () {
    const slow = await t.h.addDestination({ url: hanging.url, timeoutMs: 3000 });
    const healthy = await onSamePartitionAs(slow.id);

    await publishLaneJob(t.h, slow.id);
    await hanging.waitForRequests(1, 2000);
    const publishedAt = Date.now();
    const job = await publishLaneJob(t.h, healthy.id);
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1, 2000);

    expect(attempt).to.include({ deliveryStatus: 'delivered' });
    // Well before the hanging request's timeout (3 s), which is what waiting behind it would cost.
    expect(t.sink.requests[0]!.receivedAt - publishedAt).to.be.below(1000);
  });

  it('commits the lane only up to its first job not answered yet, and past it once answered', async function () {
    const slow = await t.h.addDestination({ url: hanging.url, timeoutMs: 1500 });
    const healthy = await onSamePartitionAs(slow.id);
    const partition = lanePartitionOf(slow.id);

    const stuck = await publishLaneJob(t.h, slow.id);
    await hanging.waitForRequests(1, 2000);
    const later = await publishLaneJob(t.h, healthy.id);
    await t.h.attemptsOf(later.deliveryId, 1, 2000);
    // The later job is answered and the lane read past it, but the hanging request holds the commit.
    expect(await laneLag(t.h, partition)).to.equal(2);

    const [timedOut] = await t.h.attemptsOf(stuck.deliveryId, 1, 5000);
    expect(timedOut).to.include({ deliveryStatus: 'retrying' });
    await waitFor('the commit past both jobs', () => laneLag(t.h, partition), (lag) => lag === 0, 5000, 10);
  });

  it('parks the jobs of a destination too far behind, while another on the same lane partition is served', async function () {
    const slow = await t.h.addDestination({ url: hanging.url, timeoutMs: 5000 });
    const healthy = await onSamePartitionAs(slow.id);
    const body = Buffer.from('{}');
    // More than its 1,024 jobs in flight (16 per connection place, 64 places).
    const jobs = Array.from({ length: 1100 }, () => deliveryJobMessage(t.h.jobFor(slow.id, { laned: true }), body).message);
    await t.h.broker.producer().send(LANES_TOPIC, jobs);
    await waitFor('the jobs past the bound parked', () => jobsInOwnTopic(t.h, slow.id), (parked) => parked >= 1100 - 1024, 5000, 10);
    const job = await publishLaneJob(t.h, healthy.id);
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1, 2000);
    expect(attempt).to.include({ deliveryStatus: 'delivered' });
    expect(await jobsInOwnTopic(t.h, slow.id)).to.be.at.most(1100 - 64);
  });

  it('sends each job once from the lanes and never copies it to the destination\'s own topic', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const jobs: DeliveryJob[] = [];
    for (let n = 0; n < 20; n += 1) jobs.push(await publishLaneJob(t.h, destination.id));
    await t.h.attempts.waitFor(20, (attempt) => attempt.destinationId === destination.id);
    await waitFor('the lanes committed', () => consumedAll(t.h.broker.admin(), LANES_GROUP, [LANES_TOPIC]), isTrue, 5000, 10);

    const sent = t.sink.requests.map((request) => JSON.parse(request.body.toString()).deliveryId as string);
    expect(sent.sort()).to.deep.equal(jobs.map((job) => job.deliveryId).sort());
    expect(await jobsInOwnTopic(t.h, destination.id)).to.equal(0);
  });

  it('sends an unreadable record to relay.dead and delivers the job beside it', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = t.h.jobFor(destination.id, { laned: true });
    const readable = deliveryJobMessage(job, Buffer.from('{}')).message;
    // Same key, so same partition and one batch.
    await t.h.broker.producer().send(LANES_TOPIC, [{ key: readable.key, value: Buffer.from('no job header') }, readable]);

    const [dead] = await t.h.dead.waitFor(1);
    expect(dead!.headers[DEAD_REASON_HEADER]).to.equal('malformed_record');
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ deliveryStatus: 'delivered' });
    await waitFor('the lanes committed', () => consumedAll(t.h.broker.admin(), LANES_GROUP, [LANES_TOPIC]), isTrue, 5000, 10);
  });

  it('parks the jobs of a disabled destination in its own topic, and sends them from there once it is enabled', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url, enabled: false });
    const job = await publishLaneJob(t.h, destination.id);
    await waitFor('the job parked', () => jobsInOwnTopic(t.h, destination.id), (count) => count === 1, 5000, 10);
    await waitFor('the lanes committed', () => consumedAll(t.h.broker.admin(), LANES_GROUP, [LANES_TOPIC]), isTrue, 5000, 10);
    expect(t.sink.requests).to.have.length(0);

    await t.h.store.destinations.update(t.h.orgId, destination.id, { enabled: true });
    await t.h.announce({ kind: 'destination', action: 'updated', orgId: t.h.orgId, id: destination.id });
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    expect(t.sink.requests).to.have.length(1);
  });

});

describe('deliverer: the lanes at a stop', function () {
  // One place per source: a source's second job waits for the first one's answer.
  const t = eachTestDelivererAndSink(() => ({ maxInFlightPerSource: 1 }));

  it('waits for the answers of attempts started from the lanes, and parks the jobs not started for the next deliverer', async function () {
    const slow = await startHttpSink([respond(200, { delayMs: 400 })]);
    try {
      const destination = await t.h.addDestination({ url: slow.url });
      // One batch of one source: the second job waits for the first one's answer.
      const [first, second] = [t.h.jobFor(destination.id, { laned: true }), t.h.jobFor(destination.id, { laned: true })];
      const body = Buffer.from('{}');
      await t.h.broker.producer().send(LANES_TOPIC, [first, second].map((job) => deliveryJobMessage(job, body).message));
      await slow.waitForRequests(1, 2000);
      await t.h.deliverer.stop();
      // Published before the stop resolved: read back at once.
      const [attempt] = await t.h.attemptsOf(first.deliveryId, 1, 1000);
      expect(attempt).to.include({ deliveryStatus: 'delivered', statusCode: 200 });
      expect(await consumedAll(t.h.broker.admin(), LANES_GROUP, [LANES_TOPIC]), 'the lanes committed past both').to.equal(true);
      expect(await jobsInOwnTopic(t.h, destination.id), 'the second job parked').to.equal(1);

      const another = await t.h.startAnotherDeliverer();
      const [next] = await t.h.attemptsOf(second.deliveryId, 1, 5000);
      expect(next).to.include({ deliveryStatus: 'delivered' });
      expect(t.h.requestsSent(another)).to.equal(1);
      expect(slow.requests).to.have.length(2);
    } finally {
      await slow.close();
    }
  });
});

describe('deliverer: a lane batch whose unreadable records do not all reach relay.dead', function () {
  const record = (offset: string, key: string, value: Buffer, headers: Record<string, string> = {}): BrokerRecord => ({
    topic: LANES_TOPIC,
    partition: 0,
    offset,
    key,
    value,
    headers,
    timestamp: 0,
  });

  it('is read again whole, and none of its jobs is attempted or parked', async function () {
    const batchesHandled: string[] = [];
    const handleLaneBatch = createLaneJobsHandler({
      // As at a stop: the destination handler starts none of them.
      async handleDestinationBatch(batch) {
        batchesHandled.push(batch.topic);
        return { handled: 0 };
      },
      async park(topic) {
        batchesHandled.push(`parked in ${topic}`);
      },
      maxRecordsInFlightPerDestination: 16,
      maxRecordsInFlight: 64,
      logger: { info() {}, warn() {}, error() {} },
    });
    const job: DeliveryJob = {
      deliveryId: 'dlv_1',
      eventId: 'evt_1',
      orgId: 'org_1',
      sourceId: 'src_1',
      destinationId: 'dst_1',
      attemptNumber: 1,
      dueAt: 0,
      contentType: 'application/json',
      providerHeaders: {},
      signatureValid: true,
      receivedAt: 0,
      laned: true,
    };
    const { message } = deliveryJobMessage(job, Buffer.from('{}'));
    const batch: RecordBatch = {
      topic: LANES_TOPIC,
      partition: 0,
      records: [record('0', 'dst_1', Buffer.from('no job header')), record('1', 'dst_1', message.value, message.headers)],
    };

    expect(await handleLaneBatch(batch)).to.deep.equal({ handled: 0 });
    expect(batchesHandled, 'only the unreadable record was handed on').to.deep.equal([LANES_TOPIC]);
  });
});
