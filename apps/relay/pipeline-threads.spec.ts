import type { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { destinationSettled } from '../../libs/testing/consumer-lag.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { ManualTimers } from '../../libs/testing/manual-timers.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { searchIndexLag } from '../../libs/store/search-index.js';
import { startRelayHarness, type RelayHarness } from '../../testing/relay-harness.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';

/**
 * RELAY_THREADS (issue 15): a process of role `all` runs its router, deliverer and recorder on threads of
 * their own, and the search indexer on one more.
 */
describeEachBackend('a relay on pipeline threads', (target) => {
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  let harness: RelayHarness;
  let sink: HttpSink;
  const restarts = new ManualTimers();
  /** Each thread's current worker, by thread name. */
  const workers = new Map<string, Worker>();

  before(async function () {
    this.timeout(90_000);
    sink = await startHttpSink([respond(200)]);
    harness = await startRelayHarness(this, target, { RELAY_THREADS: '3' }, {
      pipelineThreads: { schedule: restarts.schedule, onThreadStart: ({ name, worker }) => void workers.set(name, worker) },
    });
  });

  after(async function () {
    this.timeout(60_000);
    await harness?.stop();
    await sink?.close();
  });

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 3);
  });

  const eventStored = async (id: string) => (await harness.api('GET', `/api/events/${id}`)).status === 200;

  /** `slugs.length` sources routed to one new destination. */
  async function routedSources(slugs: string[], url = sink.url) {
    const { api } = harness;
    const destination = await api('POST', '/api/destinations', { body: { name: 'threaded receiver', url, timeoutMs: 1000 } });
    for (const slug of slugs) {
      const source = await api('POST', '/api/sources', { body: { name: slug, slug } });
      expect((await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);
    }
    return destination.body.id as string;
  }

  it('delivers every webhook once and records each attempt, the pipeline running on threads beside the main one (two on the embedded log, one on Kafka)', async () => {
    // Four sources, so that on the embedded log the jobs spread over the destination topic's partitions
    // and both threads' deliverers send; on Kafka they go through the lanes. None is sent twice.
    const slugs = ['threaded-a', 'threaded-b', 'threaded-c', 'threaded-d'];
    const destinationId = await routedSources(slugs);
    const eventIds: string[] = [];
    for (let n = 0; n < 40; n += 1) {
      const response = await harness.send(`/ingest/default/${slugs[n % slugs.length]}`, `{"n":${n}}`);
      expect(response.status, response.text).to.equal(200);
      eventIds.push(response.body.eventId as string);
    }
    const requests = await sink.waitForRequests(40, settleMs);
    expect(requests.map((request) => JSON.parse(request.body.toString()).n).sort((a, b) => a - b)).to.deep.equal([...Array(40).keys()]);
    // The recorder, on a pipeline thread, settles each event in the store the API reads.
    await waitFor('every event delivered', async () => {
      const statuses = await Promise.all(eventIds.map(async (id) => (await harness.api('GET', `/api/events/${id}`)).body.status));
      return statuses.every((status) => status === 'delivered');
    }, isTrue, settleMs);
    // Nothing left to read that could still be sent: none sent twice.
    await waitFor('every job read', () => destinationSettled(harness.relay.broker.admin(), destinationId), isTrue, settleMs);
    expect(sink.requests).to.have.length(40);
  });

  it("serves one /metrics: the main thread's ingest counts beside the pipeline threads' attempts, process metrics once", async () => {
    const text = await (await fetch(`${harness.relay.metricsUrl}/metrics`)).text();
    expect(sampleSum(text, 'relay_ingest_requests_total', { outcome: 'received' })).to.be.at.least(40);
    expect(sampleSum(text, 'relay_delivery_attempts_total')).to.be.at.least(40);
    expect(text.match(/^relay_process_cpu_seconds_total /gm)).to.have.length(1);
    // Each thread's heap apart, as the process's memory cannot tell them.
    for (const thread of ['main', 'pipeline-0', 'search-indexer']) expect(sampleSum(text, 'relay_thread_heap_used_bytes', { thread }), thread).to.be.above(1024 * 1024);
    // The ingest port's accept queue, read by the thread that listens.
    expect(text.match(/^relay_http_accept_queue_connections.*$/gm)).to.deep.equal([`relay_http_accept_queue_connections{port="${harness.relay.port}"} 0`]);
  });

  it('indexes what the pipeline threads stored, on a thread of its own', async () => {
    const slug = 'indexed';
    await routedSources([slug]);
    const token = `tok${Date.now().toString(36)}q`;
    const sent = await harness.send(`/ingest/default/${slug}`, JSON.stringify({ token }));
    expect(sent.status, sent.text).to.equal(200);
    await waitFor('the event stored and indexed', async () => (await eventStored(sent.body.eventId as string)) && (await searchIndexLag(harness.relay.store.sql)) === 0, isTrue, settleMs);
    const found = await harness.api('GET', `/api/events?search=${token}`);
    expect(found.body.data.map((event: { id: string }) => event.id)).to.deep.equal([sent.body.eventId]);
  });

  it('is ready when the store, the broker and every pipeline thread answer', async () => {
    const response = await fetch(`${harness.relay.url}/readyz`);
    expect(response.status, await response.text()).to.equal(200);
  });

  it('starts a thread that ended on its own again 1 s later; the new ones answer /readyz and deliver what arrived meanwhile', async () => {
    const receiver = await startHttpSink([respond(200)]);
    try {
      await routedSources(['restarted'], receiver.url);
      const ended = [...workers.values()];
      await Promise.all(ended.map((worker) => worker.terminate()));
      const readyz = () => fetch(`${harness.relay.url}/readyz`);
      const down = await waitFor('/readyz refusing while the threads are down', readyz, (response) => response.status === 503, settleMs);
      expect(((await down.json()) as { details: unknown }).details).to.deep.equal([{ field: 'pipeline threads', message: 'not reachable' }]);
      // The main thread still takes webhooks: they wait in the log for the threads to come back.
      for (let n = 0; n < 5; n += 1) {
        const response = await harness.api('POST', '/ingest/default/restarted', { key: null, rawBody: `{"n":${n}}`, headers: { 'content-type': 'application/json' } });
        expect(response.status, response.text).to.equal(200);
      }
      await waitFor('a restart scheduled for each ended thread', () => restarts.pendingCount, (count) => count === ended.length, settleMs);
      restarts.advance(999);
      expect(restarts.pendingCount, 'restarts due before 1 s').to.equal(ended.length);
      restarts.advance(1);
      expect(restarts.pendingCount).to.equal(0);
      await waitFor('/readyz answering 200 again', readyz, (response) => response.status === 200, settleMs);
      expect([...workers.values()]).to.have.length(ended.length);
      for (const worker of workers.values()) expect(ended).not.to.include(worker);
      const requests = await receiver.waitForRequests(5, settleMs);
      expect(requests.map((request) => JSON.parse(request.body.toString()).n).sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4]);
    } finally {
      await receiver.close();
    }
  });
});
