import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { decodeDeliveryJob, encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { createPendingDeliveries } from '../../libs/ledger/deliveries.js';
import { insertEventRow } from '../../libs/testing/store-fixtures.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { hang, resetConnection, respond } from '../../libs/testing/http-sink.js';
import { DEAD_REASON_HEADER } from '../../libs/pipeline/dead-letter.js';
import { eachTestDelivererAndSink } from '../../testing/deliverer-harness.js';
import { DELIVERER_GROUP, DESTINATION_PARTITIONS, destinationTopic } from '../../libs/pipeline/topology.js';
import { partitionFor } from '../../libs/broker/partitioner.js';
import type { AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { openDeliveredJournal } from './delivered-journal.js';

describe('deliverer: sending a job', function () {
  const t = eachTestDelivererAndSink();

  it('delivers on the first try: body byte-exact, relay and auth headers, a Standard Webhooks signature, and a delivered attempt record', async function () {
    const destination = await t.h.addDestination({
      url: `${t.sink.url}/hooks/orders?team=7`,
      headers: { 'X-Team': 'fulfilment' },
      authType: 'bearer',
      authConfig: { token: 'tok_destination' },
    });
    // Spacing, CRLF, 1.50 and multi-byte characters: anything that re-serializes the JSON changes these bytes.
    const body = Buffer.from('{ "order" : "A-1",\r\n  "note": "caf\u00e9 \u2713 \ud83d\ude9a", "total": 1.50 }\n');
    const job = await t.h.publishJob(destination.id, body, {
      providerHeaders: { 'x-shop-topic': 'orders/create', authorization: 'Basic cHJvdmlkZXI6c2VjcmV0', 'x-forwarded-for': '203.0.113.9' },
    });

    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({
      deliveryId: job.deliveryId,
      eventId: job.eventId,
      orgId: t.h.orgId,
      destinationId: destination.id,
      attemptNumber: 1,
      ok: true,
      statusCode: 200,
      error: null,
      errorKind: null,
      responseBody: 'ok',
      deliveryStatus: 'delivered',
      nextAttemptAt: null,
    });
    expect(attempt!.attemptId).to.match(/^att_[0-9a-z]{26}$/);
    expect(attempt!.completedAt).to.be.at.least(attempt!.startedAt);

    expect(t.sink.requests).to.have.length(1);
    const request = t.sink.requests[0]!;
    expect(request.method).to.equal('POST');
    expect(request.url).to.equal('/hooks/orders?team=7');
    expect(request.body.equals(body)).to.equal(true);
    expect(request.headers).to.include({
      'content-type': 'application/json',
      'x-relay-event-id': job.eventId,
      'x-relay-delivery-id': job.deliveryId,
      'x-relay-attempt': '1',
      'x-relay-source': 'shop-events',
      'x-shop-topic': 'orders/create',
      'x-team': 'fulfilment',
      authorization: 'Bearer tok_destination',
      'webhook-id': job.deliveryId,
    });
    expect(request.headers).not.to.have.property('x-forwarded-for');
    const headers = request.headers as Record<string, string>;
    expect(() => new Webhook(destination.signingSecret).verify(request.body, headers)).not.to.throw();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request.body, headers)).to.throw();

    const counted = await t.h.metrics.deliveryAttempts.get();
    expect(counted.values).to.deep.include({ labels: { destination: destination.id, outcome: 'delivered' }, value: 1 });
  });

  it('delivers a binary body byte-exact with its content type', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    // Not valid UTF-8: anything that decodes and re-encodes the body would change these bytes.
    const body = Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0d, 0x0a, 0x80]);
    const job = await t.h.publishJob(destination.id, body, { contentType: 'application/octet-stream' });

    await t.h.attemptsOf(job.deliveryId, 1);
    expect(t.sink.requests[0]!.body.equals(body)).to.equal(true);
    expect(t.sink.requests[0]!.headers['content-type']).to.equal('application/octet-stream');
  });

  it('records a timeout when the destination does not answer within its timeoutMs, and with no retries left dead-letters the job', async function () {
    t.sink.setBehaviour([hang()]);
    const destination = await t.h.addDestination({
      url: t.sink.url,
      timeoutMs: 1000,
      retryPolicy: { maxRetries: 0, initialDelay: 100, maxDelay: 1000, backoffMultiplier: 2 },
    });
    const body = Buffer.from('{"slow":true}');
    const job = await t.h.publishJob(destination.id, body);

    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ ok: false, statusCode: null, errorKind: 'timeout', deliveryStatus: 'failed', nextAttemptAt: null });
    expect(attempt!.latencyMs).to.be.within(950, 1500);
    const [dead] = await t.h.dead.waitFor(1);
    expect(decodeDeliveryJob(dead!).job.deliveryId).to.equal(job.deliveryId);
    expect(dead!.headers[DEAD_REASON_HEADER]).to.equal('retries_exhausted');
  });

  it('records a connection reset as a failed attempt and delivers on the retry', async function () {
    t.sink.setBehaviour([resetConnection(), respond(200)]);
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = await t.h.publishJob(destination.id, Buffer.from('{}'));

    const [first, second] = await t.h.attemptsOf(job.deliveryId, 2);
    expect(first).to.include({ attemptNumber: 1, ok: false, statusCode: null, errorKind: 'reset', deliveryStatus: 'retrying' });
    expect(first!.nextAttemptAt).to.equal(first!.completedAt + 100);
    expect(second).to.include({ attemptNumber: 2, ok: true, statusCode: 200, deliveryStatus: 'delivered' });
    expect(t.sink.requests.map((request) => request.headers['x-relay-attempt'])).to.deep.equal(['1', '2']);
  });

  it("names the source by the slug its job carries, on the retry too, without looking it up (the store's is shop-events)", async function () {
    t.sink.setBehaviour([respond(500), respond(200)]);
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = await t.h.publishJob(destination.id, Buffer.from('{}'), { sourceSlug: 'carried-slug' });

    await t.h.attemptsOf(job.deliveryId, 2);
    expect(t.sink.requests.map((request) => request.headers['x-relay-source'])).to.deep.equal(['carried-slug', 'carried-slug']);
  });

  it('records refused connections while the destination is down and delivers once it is back', async function () {
    await t.sink.goDown();
    const destination = await t.h.addDestination({
      url: t.sink.url,
      retryPolicy: { maxRetries: 10, initialDelay: 200, maxDelay: 400, backoffMultiplier: 2 },
    });
    const job = await t.h.publishJob(destination.id, Buffer.from('{}'));

    const [first] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(first).to.include({ attemptNumber: 1, ok: false, statusCode: null, errorKind: 'connect', deliveryStatus: 'retrying' });
    await t.sink.comeUp();
    const [delivered] = await t.h.attempts.waitFor(1, (attempt) => attempt.deliveryId === job.deliveryId && attempt.ok);
    const before = t.h.attempts.items.filter((attempt) => attempt.deliveryId === job.deliveryId && attempt.attemptNumber < delivered!.attemptNumber);
    expect(before.map((attempt) => attempt.errorKind)).to.deep.equal(before.map(() => 'connect'));
    expect(delivered).to.include({ deliveryStatus: 'delivered', statusCode: 200 });
    expect(t.sink.requests).to.have.length(1);
  });

  it('sends an unreadable record to relay.dead and goes on with the jobs after it', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    await t.h.broker.producer().send(destinationTopic(destination.id), [{ key: t.h.source.id, value: Buffer.from('no job header') }]);
    const job = await t.h.publishJob(destination.id, Buffer.from('{"after":true}'));

    const [dead] = await t.h.dead.waitFor(1);
    expect(dead!.value.toString()).to.equal('no job header');
    expect(dead!.headers[DEAD_REASON_HEADER]).to.equal('malformed_record');
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt!.deliveryStatus).to.equal('delivered');
  });

  it('does not send again a job of an earlier run whose delivery is stored delivered (a kill before its commit), and sends the pending and retrying ones', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const { sql } = t.h.store;
    /** A job of an event received before this deliverer started, its delivery stored with `status`. */
    const earlierJob = async (status: string, attemptNumber: number) => {
      const eventId = await insertEventRow(sql, t.h.orgId, t.h.source.id, null);
      const [[delivery]] = await sql.transaction((tx) => createPendingDeliveries(tx, [{ orgId: t.h.orgId, eventId, targets: [{ destinationId: destination.id, destinationName: destination.name }] }], Date.now()));
      await sql.run('UPDATE deliveries SET status = ? WHERE id = ?', [status, delivery!.id]);
      return t.h.jobFor(destination.id, { eventId, deliveryId: delivery!.id, attemptNumber, receivedAt: Date.now() - 60_000 });
    };
    const jobs = [await earlierJob('delivered', 1), await earlierJob('pending', 1), await earlierJob('retrying', 2)];
    await t.h.broker.producer().send(destinationTopic(destination.id), jobs.map((job) => encodeDeliveryJob(job, Buffer.from('{}'))));

    await t.h.attemptsOf(jobs[1]!.deliveryId, 1);
    await t.h.attemptsOf(jobs[2]!.deliveryId, 1);
    expect(t.sink.requests.map((request) => request.headers['x-relay-delivery-id'])).to.have.members([jobs[1]!.deliveryId, jobs[2]!.deliveryId]);
    expect(t.h.attempts.items.filter((attempt) => attempt.deliveryId === jobs[0]!.deliveryId)).to.deep.equal([]);
    await waitFor('every job committed', async () => (await t.h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destination.id)])).reduce((sum, partition) => sum + partition.lag, 0), (lag) => lag === 0, 5000, 10);
  });

  it('does not send a job again that the router published a second time for an attempt finished here, and sends its later attempts', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = await t.h.publishJob(destination.id, Buffer.from('{"n":1}'));
    await t.h.attemptsOf(job.deliveryId, 1);

    const publishAgain = (attemptNumber: number) => t.h.broker.producer().send(destinationTopic(destination.id), [encodeDeliveryJob({ ...job, attemptNumber }, Buffer.from(`{"n":1,"attempt":${attemptNumber}}`))]);
    await publishAgain(1);
    await publishAgain(2);
    await t.h.attemptsOf(job.deliveryId, 2);
    expect(t.sink.requests.map((request) => request.body.toString())).to.deep.equal(['{"n":1}', '{"n":1,"attempt":2}']);
  });

  it('does not send a job whose same attempt is in flight here, read again from another partition (a rebalance on Kafka), and ends it as that one ends', async function () {
    t.sink.setBehaviour([respond(200, { delayMs: 300 }), respond(200)]);
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = await t.h.publishJob(destination.id, Buffer.from('{"n":1}'));
    await t.sink.waitForRequests(1);

    // The same job under a key of another partition, so it is read while the first is still answered.
    const own = partitionFor(job.sourceId, DESTINATION_PARTITIONS);
    const otherKey = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].find((key) => partitionFor(key, DESTINATION_PARTITIONS) !== own)!;
    await t.h.broker.producer().send(destinationTopic(destination.id), [{ ...encodeDeliveryJob(job, Buffer.from('{"n":1}')), key: otherKey }]);
    await waitFor('every job committed', async () => (await t.h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destination.id)])).reduce((sum, partition) => sum + partition.lag, 0), (lag) => lag === 0, 5000, 10);
    expect(await t.h.attemptsOf(job.deliveryId, 1)).to.have.length(1);
    expect(t.sink.requests).to.have.length(1);
  });

  it('publishes the delivered attempt an earlier process journaled but did not publish (killed between), instead of sending its job again', async function () {
    const destination = await t.h.addDestination({ url: t.sink.url });
    await t.h.deliverer.stop();
    const job = await t.h.publishJob(destination.id, Buffer.from('{"answered":true}'), { receivedAt: Date.now() - 60_000 });
    const { deliveryId, eventId, orgId, destinationId, attemptNumber } = job;
    const attempt: AttemptRecord = { attemptId: 'att_answered_before_the_kill', deliveryId, eventId, orgId, destinationId, attemptNumber, startedAt: 1_000, completedAt: 1_005,
      ok: true, statusCode: 200, latencyMs: 5, error: null, errorKind: null, responseBody: '', deliveryStatus: 'delivered', nextAttemptAt: null };
    openDeliveredJournal(t.h.journalDir, 'killed').write(attempt);
    const later = await t.h.publishJob(destination.id, Buffer.from('{"later":true}'));

    const next = await t.h.startAnotherDeliverer();
    await t.h.attemptsOf(later.deliveryId, 1);
    expect(await t.h.attemptsOf(job.deliveryId, 1)).to.deep.equal([attempt]);
    expect(t.sink.requests.map((request) => request.body.toString())).to.deep.equal(['{"later":true}']);
    expect(t.h.requestsSent(next)).to.equal(1);
  });

  it('on stop, finishes the request in flight, publishes its attempt and commits, and takes no new job', async function () {
    t.sink.setBehaviour([respond(200, { delayMs: 300 }), respond(200)]);
    const destination = await t.h.addDestination({ url: t.sink.url });
    const job = await t.h.publishJob(destination.id, Buffer.from('{}'));
    await t.sink.waitForRequests(1);

    await t.h.deliverer.stop();
    const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
    expect(attempt).to.include({ ok: true, deliveryStatus: 'delivered' });
    const lag = await t.h.broker.admin().lag(DELIVERER_GROUP, [destinationTopic(destination.id)]);
    expect(lag.reduce((sum, partition) => sum + partition.lag, 0)).to.equal(0);

    // The stopped deliverer neither sends nor commits a later job: one joining the group after it sends it, as its first attempt.
    const late = await t.h.publishJob(destination.id, Buffer.from('{"late":true}'));
    const another = await t.h.startAnotherDeliverer();
    const [lateAttempt] = await t.h.attemptsOf(late.deliveryId, 1);
    expect(lateAttempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    expect(t.sink.requests.map((request) => request.body.toString())).to.deep.equal(['{}', '{"late":true}']);
    expect([t.h.requestsSent(t.h.deliverer), t.h.requestsSent(another)]).to.deep.equal([1, 1]);
  });
});
