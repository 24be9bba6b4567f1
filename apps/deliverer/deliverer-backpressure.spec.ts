import { expect } from 'chai';
import { encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { startDelivererHarness, type DelivererHarness } from '../../testing/deliverer-harness.js';
import { IDLE_STATE_SWEEP_MS } from './deliverer.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';

// The default: far beyond what the test waits in real time, so only the manual timers can half-open the circuit.
const RESET_TIMEOUT_MS = 30_000;
// Longer than the reset timeout: the failed jobs come back once the trial has closed the circuit.
const RETRY_POLICY = { maxRetries: 5, initialDelay: 60_000, maxDelay: 60_000, backoffMultiplier: 1 };

describe('deliverer: backpressure', function () {
  let h: DelivererHarness;
  let failing: HttpSink;
  let healthy: HttpSink;
  // The deliverer's clock and the timers of its pauses and breakers move only when the test advances them.
  let timers: ManualTimers;

  const startHarness = async (maxInFlightPerSource?: number) => {
    timers = new ManualTimers(Date.now());
    h = await startDelivererHarness({
      breakerOptions: { volumeThreshold: 3, errorThresholdPercentage: 50, resetTimeoutMs: RESET_TIMEOUT_MS, rollingCountTimeoutMs: 10_000 },
      maxInFlightPerSource,
      now: timers.now,
      schedule: timers.schedule,
    });
  };

  /** Moves time on to the reset timeout: a millisecond before, the circuit is still open, its topic paused and nothing more sent. */
  function reachResetTimeout(destinationId: string): void {
    const sent = failing.requests.length;
    timers.advance(RESET_TIMEOUT_MS - 1);
    expect(h.deliverer.circuitState(destinationId), 'a millisecond before the reset timeout').to.equal('open');
    expect(h.paused(destinationTopic(destinationId))).to.equal(true);
    expect(failing.requests).to.have.length(sent);
    timers.advance(1);
  }

  beforeEach(async function () {
    failing = await startHttpSink();
    healthy = await startHttpSink();
  });

  afterEach(async function () {
    await h.close();
    await failing.close();
    await healthy.close();
  });

  it('opens the circuit after failures and pauses only that destination, while another destination keeps flowing, and the wait costs no retry', async function () {
    // One request at a time, so the circuit opens between two records of one batch.
    await startHarness(1);
    failing.setBehaviour([respond(500), respond(500), respond(500), respond(200)]);
    const troubled = await h.addDestination({ url: failing.url, retryPolicy: RETRY_POLICY });
    const steady = await h.addDestination({ url: healthy.url });
    // One batch: the circuit opens while jobs 4 and 5 are still in it.
    const jobs = [];
    for (let n = 1; n <= 5; n += 1) jobs.push(h.jobFor(troubled.id));
    await h.broker.producer().send(destinationTopic(troubled.id), jobs.map((job) => encodeDeliveryJob(job, Buffer.from('{}'))));

    const failures = await h.attempts.waitFor(3, (attempt) => attempt.destinationId === troubled.id);
    expect(failures.map((attempt) => attempt.statusCode)).to.deep.equal([500, 500, 500]);
    expect(h.deliverer.circuitState(troubled.id)).to.equal('open');
    const gauge = await h.metrics.circuitState.get();
    expect(gauge.values).to.deep.include({ labels: { destination: troubled.id, state: 'open' }, value: 1 });

    for (let n = 1; n <= 3; n += 1) await h.publishJob(steady.id, Buffer.from(`{"steady":${n}}`));
    const delivered = await h.attempts.waitFor(3, (attempt) => attempt.destinationId === steady.id, 1000);
    expect(delivered.every((attempt) => attempt.deliveryStatus === 'delivered')).to.equal(true);
    expect(h.deliverer.circuitState(troubled.id), 'the other destination flowed while this circuit was open').to.equal('open');
    expect(failing.requests).to.have.length(3);

    // Half open at the reset timeout: job 4 is the trial, succeeds, closes the circuit; job 5 follows.
    reachResetTimeout(troubled.id);
    const [fourth] = await h.attemptsOf(jobs[3]!.deliveryId, 1, 3000);
    const [fifth] = await h.attemptsOf(jobs[4]!.deliveryId, 1, 3000);
    for (const attempt of [fourth!, fifth!]) expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    expect(fourth!.startedAt - failures[2]!.completedAt).to.equal(RESET_TIMEOUT_MS);
    expect(h.deliverer.circuitState(troubled.id)).to.equal('closed');
    timers.advance(RETRY_POLICY.initialDelay - RESET_TIMEOUT_MS);

    // The three failed jobs come back once each, as their second attempt.
    for (const job of jobs.slice(0, 3)) {
      const attempts = await h.attemptsOf(job.deliveryId, 2, 3000);
      expect(attempts.map((attempt) => [attempt.attemptNumber, attempt.deliveryStatus])).to.deep.equal([
        [1, 'retrying'],
        [2, 'delivered'],
      ]);
    }
    const troubledAttempts = h.attempts.items.filter((attempt) => attempt.destinationId === troubled.id);
    expect(troubledAttempts, 'an attempt record for every request, none for the waits').to.have.length(failing.requests.length);
    expect(troubledAttempts).to.have.length(8);
  });

  it('when the circuit opens under a window of requests in flight, records each of them once and starts nothing more until the trial, using no retry', async function () {
    await startHarness(4);
    // The first four, all in flight at once, fail together: the circuit opens while their answers come
    // in, before a success of a job started after one of them could bring the failure rate down to 50%.
    const allFourArrived = failing.waitForRequests(4);
    failing.setBehaviour((_request, index) => (index < 4 ? respond(500, { after: allFourArrived }) : respond(200)));
    const troubled = await h.addDestination({ url: failing.url, retryPolicy: RETRY_POLICY });
    const jobs = [];
    for (let n = 1; n <= 8; n += 1) jobs.push(h.jobFor(troubled.id));
    await h.broker.producer().send(destinationTopic(troubled.id), jobs.map((job) => encodeDeliveryJob(job, Buffer.from('{}'))));

    await h.attempts.waitFor(4, (attempt) => attempt.statusCode === 500);
    expect(h.deliverer.circuitState(troubled.id)).to.equal('open');
    const openedAt = timers.now();
    reachResetTimeout(troubled.id);
    // Each of the others started before the circuit opened (the clock still at openedAt), or was held until the trial.
    const firstAttempts = [];
    for (const job of jobs.slice(4)) firstAttempts.push(...(await h.attemptsOf(job.deliveryId, 1, 4000)));
    for (const attempt of firstAttempts) expect(attempt).to.include({ attemptNumber: 1, deliveryStatus: 'delivered' });
    const held = firstAttempts.filter((attempt) => attempt.startedAt !== openedAt);
    expect(held, 'the trial and the jobs after it').to.not.be.empty;
    for (const attempt of held) expect(attempt.startedAt).to.equal(openedAt + RESET_TIMEOUT_MS);

    timers.advance(RETRY_POLICY.initialDelay - RESET_TIMEOUT_MS);
    for (const job of jobs.slice(0, 4)) {
      const attempts = await h.attemptsOf(job.deliveryId, 2, 4000);
      expect(attempts.map((attempt) => [attempt.attemptNumber, attempt.statusCode])).to.deep.equal([
        [1, 500],
        [2, 200],
      ]);
    }
    const troubledAttempts = h.attempts.items.filter((attempt) => attempt.destinationId === troubled.id);
    expect(troubledAttempts, 'one attempt record per request, none for the wait').to.have.length(failing.requests.length);
    expect(troubledAttempts).to.have.length(12);
  });

  it('drops a destination no longer sent to from memory at the next sweep: its closed breaker and its circuit gauge', async function () {
    await startHarness(1);
    failing.setBehaviour([respond(500), respond(500), respond(500), respond(200)]);
    // Retries due after the sweep, so nothing is sent meanwhile.
    const troubled = await h.addDestination({ url: failing.url, retryPolicy: { ...RETRY_POLICY, initialDelay: 2 * IDLE_STATE_SWEEP_MS, maxDelay: 2 * IDLE_STATE_SWEEP_MS } });
    for (let n = 1; n <= 3; n += 1) await h.publishJob(troubled.id, Buffer.from('{}'));
    await h.attempts.waitFor(3, (attempt) => attempt.destinationId === troubled.id);
    expect(h.deliverer.circuitState(troubled.id)).to.equal('open');
    reachResetTimeout(troubled.id);
    await h.publishJob(troubled.id, Buffer.from('{}'));
    await h.attempts.waitFor(4, (attempt) => attempt.destinationId === troubled.id);
    expect(h.deliverer.circuitState(troubled.id)).to.equal('closed');
    const series = async () => (await h.metrics.circuitState.get()).values.filter((value) => value.labels.destination === troubled.id);
    expect(await series()).to.deep.include({ labels: { destination: troubled.id, state: 'closed' }, value: 1 });

    // The sweep after the breaker's window (10 s here) has counted nothing.
    timers.advance(IDLE_STATE_SWEEP_MS - RESET_TIMEOUT_MS);
    expect(await series()).to.deep.equal([]);
    expect(h.deliverer.circuitState(troubled.id)).to.equal('closed');
    // Its next job makes a breaker again, closed.
    await h.publishJob(troubled.id, Buffer.from('{}'));
    const [fifth] = (await h.attempts.waitFor(5, (attempt) => attempt.destinationId === troubled.id)).slice(4);
    expect(fifth).to.include({ statusCode: 200, deliveryStatus: 'delivered' });
  });

  it('spaces deliveries to the destination rate limit by pausing its topic, uses up no retry, and does not slow other destinations', async function () {
    timers = new ManualTimers(Date.now());
    h = await startDelivererHarness({ now: timers.now, schedule: timers.schedule });
    const limited = await h.addDestination({ url: failing.url, rateLimitPerMinute: 600 });
    const unlimited = await h.addDestination({ url: healthy.url });
    const limitedTopic = destinationTopic(limited.id);
    failing.setBehaviour([respond(200)]);
    const jobs = [];
    for (let n = 1; n <= 14; n += 1) jobs.push(h.jobFor(limited.id));
    await h.broker.producer().send(limitedTopic, jobs.map((job) => encodeDeliveryJob(job, Buffer.from('{}'))));

    // A burst of 10 (one second's worth); the 11th finds the budget spent and pauses the topic.
    const heldAgain = () => waitFor('the limited topic paused', () => h.paused(limitedTopic), isTrue, 5000, 5);
    await failing.waitForRequests(10);
    await heldAgain();
    expect(failing.requests).to.have.length(10);

    // The other destination is not slowed: delivered while the limited one waits for its next token.
    for (let n = 1; n <= 5; n += 1) await h.publishJob(unlimited.id, Buffer.from('{}'));
    const otherAttempts = await h.attempts.waitFor(5, (attempt) => attempt.destinationId === unlimited.id);
    expect(otherAttempts.every((attempt) => attempt.deliveryStatus === 'delivered')).to.equal(true);
    expect(h.paused(limitedTopic)).to.equal(true);
    expect(failing.requests).to.have.length(10);

    // Then one request per 100 ms: not a millisecond earlier.
    timers.advance(99);
    expect(h.paused(limitedTopic)).to.equal(true);
    timers.advance(1);
    for (let n = 11; n <= 14; n += 1) {
      if (n > 11) timers.advance(100);
      await failing.waitForRequests(n);
      if (n < 14) await heldAgain();
      expect(failing.requests).to.have.length(n);
    }

    const attempts = await h.attempts.waitFor(14, (attempt) => attempt.destinationId === limited.id);
    expect(attempts.every((attempt) => attempt.attemptNumber === 1 && attempt.deliveryStatus === 'delivered')).to.equal(true);
  });
});
