import { expect } from 'chai';
import type { BrokerRecord, Consumer } from '../../libs/broker/broker.js';
import { RETRY_TIERS } from '../../libs/delivery/retry-schedule.js';
import { decodeDeliveryJob, encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { destinationSettled } from '../../libs/testing/consumer-lag.js';
import { respond } from '../../libs/testing/http-sink.js';
import { DEAD_REASON_HEADER } from '../../libs/pipeline/dead-letter.js';
import { Collected, eachTestDelivererAndSink } from '../../testing/deliverer-harness.js';
import { retryTierTopic } from '../../libs/pipeline/topology.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';

const SHORTEST_TIER_TOPIC = retryTierTopic(RETRY_TIERS[0]!);

describe('deliverer: retries', function () {
  // The deliverer's and the log's clock and the retry tiers' timers move only when a test advances them.
  let timers: ManualTimers;
  const t = eachTestDelivererAndSink(() => {
    timers = new ManualTimers(Date.now());
    return { now: timers.now, schedule: timers.schedule };
  });

  /** Waits until `topic` holds the next job back, moves the clock to its time (and not a millisecond earlier), and waits for its request. */
  async function comesDue(topic: string, inMs: number): Promise<void> {
    await waitFor(`${topic} paused`, () => t.h.paused(topic), isTrue, 5000, 5);
    const sent = t.sink.requests.length;
    timers.advance(inMs - 1);
    expect(t.h.paused(topic), `${topic} a millisecond before`).to.equal(true);
    timers.advance(1);
    await t.sink.waitForRequests(sent + 1);
  }

  it('retries a 500 after initialDelay, then after initialDelay * multiplier, and records retrying, retrying, delivered', async function () {
    t.sink.setBehaviour([respond(500, { body: 'boom' }), respond(500), respond(200)]);
    const destination = await t.h.addDestination({
      url: t.sink.url,
      retryPolicy: { maxRetries: 5, initialDelay: 100, maxDelay: 10_000, backoffMultiplier: 2 },
    });
    const job = await t.h.publishJob(destination.id, Buffer.from('{"n":1}'));
    await comesDue(SHORTEST_TIER_TOPIC, 100);
    await comesDue(SHORTEST_TIER_TOPIC, 200);

    const attempts = await t.h.attemptsOf(job.deliveryId, 3);
    expect(attempts.map((attempt) => [attempt.attemptNumber, attempt.statusCode, attempt.deliveryStatus])).to.deep.equal([
      [1, 500, 'retrying'],
      [2, 500, 'retrying'],
      [3, 200, 'delivered'],
    ]);
    expect(attempts[0]).to.include({ errorKind: 'http_status', error: 'HTTP 500', responseBody: 'boom' });
    expect(attempts[0]!.nextAttemptAt! - attempts[0]!.completedAt).to.equal(100);
    expect(attempts[1]!.nextAttemptAt! - attempts[1]!.completedAt).to.equal(200);
    expect(attempts[2]!.nextAttemptAt).to.equal(null);
    // Each retry started at its due time.
    expect(attempts[1]!.startedAt).to.equal(attempts[0]!.nextAttemptAt);
    expect(attempts[2]!.startedAt).to.equal(attempts[1]!.nextAttemptAt);
    const scheduled = await t.h.metrics.retriesScheduled.get();
    expect(scheduled.values).to.deep.include({ labels: { tier: '1s' }, value: 2 });
  });

  it('when the destination answers 429 with Retry-After, schedules the retry after it rather than after the shorter backoff', async function () {
    t.sink.setBehaviour([respond(429, { headers: { 'Retry-After': '1' } }), respond(200)]);
    const destination = await t.h.addDestination({
      url: t.sink.url,
      retryPolicy: { maxRetries: 3, initialDelay: 100, maxDelay: 10_000, backoffMultiplier: 2 },
    });
    const job = await t.h.publishJob(destination.id, Buffer.from('{}'));
    await comesDue(SHORTEST_TIER_TOPIC, 1000);

    const [limited, delivered] = await t.h.attemptsOf(job.deliveryId, 2);
    expect(limited).to.include({ statusCode: 429, deliveryStatus: 'retrying' });
    expect(limited!.nextAttemptAt! - limited!.completedAt).to.equal(1000);
    expect(delivered).to.include({ attemptNumber: 2, deliveryStatus: 'delivered', startedAt: limited!.nextAttemptAt });
  });

  it('after 1 + maxRetries failed attempts, records the delivery failed and publishes the job to relay.dead', async function () {
    t.sink.setBehaviour([respond(503)]);
    const destination = await t.h.addDestination({
      url: t.sink.url,
      retryPolicy: { maxRetries: 2, initialDelay: 100, maxDelay: 1000, backoffMultiplier: 1 },
    });
    const body = Buffer.from('{"last":"chance"}');
    const job = await t.h.publishJob(destination.id, body);
    await comesDue(SHORTEST_TIER_TOPIC, 100);
    await comesDue(SHORTEST_TIER_TOPIC, 100);

    const attempts = await t.h.attemptsOf(job.deliveryId, 3);
    expect(attempts.map((attempt) => attempt.deliveryStatus)).to.deep.equal(['retrying', 'retrying', 'failed']);
    expect(attempts[2]!.nextAttemptAt).to.equal(null);
    const [dead] = await t.h.dead.waitFor(1);
    const { job: deadJob, body: deadBody } = decodeDeliveryJob(dead!);
    expect(deadJob).to.include({ deliveryId: job.deliveryId, attemptNumber: 3 });
    expect(deadBody.equals(body)).to.equal(true);
    expect(dead!.headers[DEAD_REASON_HEADER]).to.equal('retries_exhausted');
    // Nothing after the last attempt: no job left uncommitted in the destination topic or a retry tier that could be sent again.
    await waitFor('nothing pending in the destination topic and the retry tiers', () => destinationSettled(t.h.broker.admin(), destination.id), isTrue, 5000, 10);
    expect(t.sink.requests).to.have.length(3);
    const deadLetters = await t.h.metrics.deadLetters.get();
    expect(deadLetters.values).to.deep.include({ labels: { reason: 'retries_exhausted' }, value: 1 });
  });

  it('moves a job whose time left is shorter than its tier to the shorter tier that fits, and delivers it when due', async function () {
    const shortest = SHORTEST_TIER_TOPIC;
    const passedShortest = new Collected<BrokerRecord>();
    const watcher: Consumer = t.h.broker.consumer({
      groupId: 'test-shortest-tier',
      topics: [shortest],
      fromBeginning: true,
      handleBatch: async (batch) => batch.records.forEach((record) => passedShortest.add(record)),
    });
    await watcher.start();
    try {
      const destination = await t.h.addDestination({ url: t.sink.url });
      const dueAt = timers.now() + 1500;
      const job = t.h.jobFor(destination.id, { attemptNumber: 2, dueAt });
      // As if it had been put in the 30 s tier: it must not wait 30 s there.
      await t.h.broker.producer().send(retryTierTopic(RETRY_TIERS[2]!), [encodeDeliveryJob(job, Buffer.from('{}'))]);

      const moved = await passedShortest.waitFor(1);
      expect(decodeDeliveryJob(moved[0]!).job.deliveryId).to.equal(job.deliveryId);
      // The shortest tier's delay, then the 500 ms left.
      await waitFor('the shortest tier paused', () => t.h.paused(shortest), isTrue, 5000, 5);
      timers.advance(1000);
      await comesDue(shortest, 500);
      const [attempt] = await t.h.attemptsOf(job.deliveryId, 1);
      expect(attempt).to.include({ attemptNumber: 2, deliveryStatus: 'delivered', startedAt: dueAt });
    } finally {
      await watcher.stop();
    }
  });
});
