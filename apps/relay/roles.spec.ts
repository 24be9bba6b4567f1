import { expect } from 'chai';
import type { Role } from '../../libs/config/config.js';
import { searchIndexLag } from '../../libs/store/search-index.js';
import { BACKEND_TARGETS } from '../../libs/testing/backend-targets.js';
import { apiClient } from '../../testing/api-client.js';
import { hang, startHttpSink } from '../../libs/testing/http-sink.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { API_KEY, configurePipeline, deliveryStatusCounts, postWebhook, useRelayProcesses, type Pipeline } from '../../testing/pipeline-fixture.js';
import type { RelayProcess } from '../../libs/testing/relay-child-process.js';

const WEBHOOKS = 12;
const kafkaPostgres = BACKEND_TARGETS.find((target) => target.name.includes('Kafka'))!;

describe(`relay roles as separate processes [${kafkaPostgres.name}]`, function () {
  this.timeout(180_000);
  let api: RelayProcess;
  let gateways: RelayProcess[];
  let byRole: (role: Role) => RelayProcess[];
  let pipeline: Pipeline;
  let acknowledged: string[];
  // The api process first: it applies the migrations the others then find done.
  const suite = useRelayProcesses(kafkaPostgres, { RELAY_RETRY_JITTER: '0' }, async ({ start, processes, sink }) => {
    api = await start('api');
    await Promise.all((['gateway', 'gateway', 'router', 'deliverer', 'recorder'] as const).map((role) => start(role)));
    byRole = (role) => processes.filter((member) => member.role === role);
    gateways = byRole('gateway');
    pipeline = await configurePipeline(api.url, `${sink.url}/hooks`);
    // Alternate between the two gateways, as a load balancer would.
    const answers = await Promise.all(
      Array.from({ length: WEBHOOKS }, (_, n) => postWebhook(gateways[n % 2]!.url, pipeline, { order: n })),
    );
    acknowledged = answers.filter((id): id is string => id !== undefined);
  });

  it('serves /healthz and /readyz on every process', async function () {
    for (const member of suite.processes) {
      for (const probe of ['/healthz', '/readyz']) {
        expect((await fetch(`${member.url}${probe}`)).status, `${member.role} ${probe}`).to.equal(200);
      }
    }
  });

  it('acknowledges every webhook on the gateway processes and counts each on the gateway that took it', async function () {
    expect(acknowledged).to.have.length(WEBHOOKS);
    for (const gateway of gateways) {
      const text = await gateway.metrics();
      expect(sampleSum(text, 'relay_ingest_requests_total', { outcome: 'received' })).to.equal(WEBHOOKS / 2);
      expect(sampleSum(text, 'relay_ingest_duration_seconds_count', { outcome: 'received' })).to.equal(WEBHOOKS / 2);
      expect(sampleSum(text, 'relay_broker_publish_duration_seconds_count', { topic: 'relay.ingest' })).to.equal(WEBHOOKS / 2);
    }
  });

  it('delivers every acknowledged webhook to the destination once', async function () {
    await suite.sink.waitForRequests(WEBHOOKS, 30_000);
    const delivered = suite.sink.requests.map((request) => request.headers['x-relay-event-id']);
    expect([...delivered].sort()).to.deep.equal([...acknowledged].sort());
    expect(suite.sink.requests.map((request) => JSON.parse(request.body.toString()).order).sort((a, b) => a - b)).to.deep.equal(
      Array.from({ length: WEBHOOKS }, (_, n) => n),
    );
  });

  it('counts the attempts and their latency on the deliverer process, per destination', async function () {
    const [deliverer] = byRole('deliverer');
    const labels = { destination: pipeline.destinationId };
    // The attempt is counted when its answer arrives; its publish to relay.attempts completes just after.
    await waitFor(
      'the deliverer to count and publish every attempt',
      async () => sampleSum(await deliverer!.metrics(), 'relay_broker_publish_duration_seconds_count', { topic: 'relay.attempts' }),
      (published) => published >= WEBHOOKS,
    );
    const text = await deliverer!.metrics();
    expect(sampleSum(text, 'relay_delivery_attempts_total', { ...labels, outcome: 'delivered' })).to.equal(WEBHOOKS);
    expect(sampleSum(text, 'relay_delivery_attempt_duration_seconds_count', labels)).to.equal(WEBHOOKS);
    expect(sampleSum(text, 'relay_delivery_attempt_duration_seconds_bucket', { ...labels, le: '+Inf' })).to.equal(WEBHOOKS);
    expect(sampleSum(text, 'relay_broker_publish_duration_seconds_count', { topic: 'relay.attempts' })).to.equal(WEBHOOKS);
    expect(sampleSum(text, 'relay_circuit_state', { ...labels, state: 'open' })).to.equal(0);
    expect(sampleSum(text, 'relay_dead_letters_total')).to.equal(0);
    expect(sampleSum(text, 'relay_deliveries_in_flight')).to.equal(0);
  });

  it('times the wait before each hop and its handling on the process that runs the hop', async function () {
    await suite.sink.waitForRequests(WEBHOOKS, 30_000);
    for (const [role, group] of [
      ['router', 'relay-router'],
      ['recorder', 'relay-recorder'],
    ] as const) {
      const [member] = byRole(role);
      await waitFor(
        `the ${role} to time a batch`,
        async () => sampleSum(await member!.metrics(), 'relay_consumer_record_wait_seconds_count', { group }),
        (batches) => batches >= 1,
      );
      const text = await member!.metrics();
      expect(sampleSum(text, 'relay_consumer_batch_duration_seconds_count', { group }), role).to.equal(sampleSum(text, 'relay_consumer_record_wait_seconds_count', { group }));
      for (const gateway of gateways) expect(sampleSum(await gateway.metrics(), 'relay_consumer_record_wait_seconds_count', { group }), `gateway, ${group}`).to.equal(0);
    }
  });

  it('has the recorder process mark every delivery delivered in the store', async function () {
    const counts = await waitFor(
      'every delivery to be recorded as delivered',
      () => deliveryStatusCounts(suite.store, pipeline.destinationId),
      (statuses) => statuses.delivered === WEBHOOKS,
    );
    expect(counts).to.deep.equal({ delivered: WEBHOOKS });
  });

  it('has the router process (the only one indexing) index every stored event for search, report its lag, and the api find them', async function () {
    await waitFor(
      'every event stored and indexed for search',
      async () => ({ stored: (await suite.store.sql.all('SELECT id FROM events')).length, unindexed: await searchIndexLag(suite.store.sql) }),
      (index) => index.stored === WEBHOOKS && index.unindexed === 0,
    );
    const [router] = byRole('router');
    // Published by the pass after its last batch's commit, which the store shows first.
    await waitFor('the router to report the index caught up', () => router!.metrics(), (text) => /^relay_search_index_lag_events 0$/m.test(text));
    const found = await apiClient(api.url, API_KEY)('GET', `/api/events?search=${encodeURIComponent('"order":11')}`);
    expect(found.body.data.map((event: { id: string }) => event.id)).to.deep.equal([acknowledged[11]]);
  });

  it("keeps each role's work in its own process", async function () {
    const count = async (member: RelayProcess) => {
      const text = await member.metrics();
      return {
        ingest: sampleSum(text, 'relay_ingest_requests_total'),
        attempts: sampleSum(text, 'relay_delivery_attempts_total'),
        configAnnouncements: sampleSum(text, 'relay_broker_publish_duration_seconds_count', { topic: 'relay.config' }),
      };
    };
    // The api announced the source, the destination and the route on relay.config.
    expect(await count(api)).to.deep.equal({ ingest: 0, attempts: 0, configAnnouncements: 3 });
    for (const role of ['router', 'recorder'] as const) {
      expect(await count(byRole(role)[0]!), role).to.deep.equal({ ingest: 0, attempts: 0, configAnnouncements: 0 });
    }
    for (const gateway of gateways) expect((await count(gateway)).attempts, 'gateway').to.equal(0);
    expect((await count(byRole('deliverer')[0]!)).ingest, 'deliverer').to.equal(0);
  });

  it("holds a source's rate limit across both gateway processes", async function () {
    const limit = 4;
    const minute = () => Math.floor(Date.now() / 60_000);
    // The gateways' windows are wall-clock minutes: a run that straddles one is counted in two windows, so it is repeated with a new source.
    for (let run = 1; ; run++) {
      const created = await apiClient(api.url, API_KEY)('POST', '/api/sources', {
        body: { name: `Limited ${run}`, slug: `limited-${run}`, provider: 'generic', rateLimitPerMinute: limit },
      });
      expect(created.status, created.text).to.equal(201);
      const ingestPath = new URL(created.body.webhookUrl).pathname;
      const startedIn = minute();
      const statuses: number[] = [];
      for (let n = 0; n < 10; n++) {
        const response = await fetch(`${gateways[n % 2]!.url}${ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
      if (minute() !== startedIn && run < 3) continue;
      expect(statuses).to.deep.equal([...Array<number>(limit).fill(200), ...Array<number>(10 - limit).fill(429)]);
      return;
    }
  });
  // Last: its announcements would change the per-process counts above.
  it('shows on the api process, within 5 s, the circuit the deliverer process opened for a hanging destination', async function () {
    const call = apiClient(api.url, API_KEY);
    const hanging = await startHttpSink([hang()]);
    try {
      const source = await call('POST', '/api/sources', { body: { name: 'To a hanging one', slug: 'to-hanging', provider: 'generic' } });
      expect(source.status, source.text).to.equal(201);
      const destination = await call('POST', '/api/destinations', { body: { name: 'Hanging', url: `${hanging.url}/hooks`, timeoutMs: 1000 } });
      expect(destination.status, destination.text).to.equal(201);
      const destinationId = destination.body.id as string;
      expect((await call('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId } })).status).to.equal(201);
      const ingestPath = new URL(source.body.webhookUrl).pathname;
      for (let n = 0; n < 6; n++) {
        const response = await fetch(`${gateways[n % 2]!.url}${ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
        expect(response.status).to.equal(200);
        await response.arrayBuffer();
      }
      const [deliverer] = byRole('deliverer');
      await waitFor(
        'the deliverer process to open the circuit',
        async () => sampleSum(await deliverer!.metrics(), 'relay_circuit_state', { destination: destinationId, state: 'open' }),
        (open) => open === 1,
        60_000,
      );
      const openedBy = Date.now();
      await waitFor(
        'the api process to show the circuit open',
        async () => (await call('GET', `/api/destinations/${destinationId}`)).body.circuitState as string,
        (state) => state === 'open',
        10_000,
      );
      expect(Date.now() - openedBy).to.be.at.most(5_000);
    } finally {
      await hanging.close();
    }
  });
});
