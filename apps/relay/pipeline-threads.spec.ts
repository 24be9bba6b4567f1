import { expect } from 'chai';
import { describeEachBackend } from '../../libs/testing/backend-targets.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { startRelayHarness, type RelayHarness } from '../../libs/testing/relay-harness.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import { DELIVERER_GROUP, destinationTopic, RETRY_GROUP, RETRY_TIER_TOPICS } from '../../libs/pipeline/topology.js';

/** RELAY_THREADS (issue 15): a process of role `all` runs its router, deliverer and recorder on threads of their own. */
describeEachBackend('a relay on pipeline threads', (target) => {
  const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
  let harness: RelayHarness;
  let sink: HttpSink;

  before(async function () {
    this.timeout(90_000);
    sink = await startHttpSink([respond(200)]);
    harness = await startRelayHarness(this, target, { RELAY_THREADS: '3' });
  });

  after(async function () {
    this.timeout(60_000);
    await harness?.stop();
    await sink?.close();
  });

  beforeEach(function () {
    this.currentTest?.timeout(settleMs * 3);
  });

  /** `slugs.length` sources routed to one new destination (with the shortest timeout, so a copy's deadline comes soon). */
  async function routedSources(slugs: string[]) {
    const { api } = harness;
    const destination = await api('POST', '/api/destinations', { body: { name: 'threaded receiver', url: sink.url, timeoutMs: 1000 } });
    for (const slug of slugs) {
      const source = await api('POST', '/api/sources', { body: { name: slug, slug } });
      expect((await api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);
    }
    return destination.body.id as string;
  }

  /** No job of the destination left unread, in its topic or waiting in a retry tier (a copy's second look). */
  async function settled(destinationId: string): Promise<boolean> {
    const admin = harness.relay.broker.admin();
    const lags = [...(await admin.lag(RETRY_GROUP, [...RETRY_TIER_TOPICS])), ...(await admin.lag(DELIVERER_GROUP, [destinationTopic(destinationId)]))];
    return lags.every((partition) => partition.lag === 0);
  }

  it('delivers every webhook once and records each attempt, the pipeline running on two threads beside the main one', async () => {
    // The destination is new, so on Kafka its jobs go through relay.fresh; their copies are keyed by source, so
    // with several sources each pipeline thread's deliverer reads copies of jobs the other one attempted.
    const slugs = ['threaded-a', 'threaded-b', 'threaded-c', 'threaded-d'];
    const destinationId = await routedSources(slugs);
    const eventIds: string[] = [];
    for (let n = 0; n < 40; n += 1) {
      const response = await harness.api('POST', `/ingest/default/${slugs[n % slugs.length]}`, { key: null, rawBody: `{"n":${n}}`, headers: { 'content-type': 'application/json' } });
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
    // Every copy has been read, and looked at again where its original's outcome was not known yet: none sent twice.
    await waitFor('every copy read', () => settled(destinationId), isTrue, settleMs);
    expect(sink.requests).to.have.length(40);
  });

  it("serves one /metrics: the main thread's ingest counts beside the pipeline threads' attempts, process metrics once", async () => {
    const text = await (await fetch(`${harness.relay.url}/metrics`)).text();
    expect(sampleSum(text, 'relay_ingest_requests_total', { outcome: 'received' })).to.be.at.least(40);
    expect(sampleSum(text, 'relay_delivery_attempts_total')).to.be.at.least(40);
    expect(text.match(/^relay_process_cpu_seconds_total /gm)).to.have.length(1);
  });

  it('is ready when the store, the broker and every pipeline thread answer', async () => {
    const response = await fetch(`${harness.relay.url}/readyz`);
    expect(response.status, await response.text()).to.equal(200);
  });
});
