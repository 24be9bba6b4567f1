import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_RECURSIVE_STEPS, MAX_SELECTORS } from '../../libs/payload/field-path.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { embeddedLogOn } from '../../libs/testing/backend-targets.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { startRelayHarness, type RelayHarness } from '../../testing/relay-harness.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { isDefined, waitFor } from '../../libs/testing/wait-for.js';

/**
 * Issue 53, finding 2, at the probe's rate and body: one organization floods its source with small bodies
 * nested 60 deep, under the heaviest mask the API still accepts, while another sends a steady trickle.
 */
const FLOOD_PER_SECOND = 16;
const FLOOD_SECONDS = 12;
const TRICKLE_PER_SECOND = 10;
const BODY_DEPTH = 60;
/** The bound for the other organization's ingest-to-delivery p99 during the flood. */
const OTHER_P99_BOUND_MS = 1_000;
/**
 * A scrape asks every thread for its metrics and leaves out one that has not answered in 2 s
 * (pipeline-threads.ts): answering well inside that means the pipeline thread answered too.
 */
const SCRAPE_BOUND_MS = 1_000;

/** A union of `count` wildcards: each is a selector of its own. */
const wildcards = (count: number) => `[${Array.from({ length: count }, () => '*').join(',')}]`;
/** Every recursive step and selector a path may have, all of them wildcards. */
const HEAVIEST_ACCEPTED_MASK = Array.from({ length: MAX_RECURSIVE_STEPS }, () => `..${wildcards(MAX_SELECTORS / MAX_RECURSIVE_STEPS)}`).join('');
const HEAVIEST_MASK_PATH = `$${HEAVIEST_ACCEPTED_MASK}`;

/** About 1.2 KB of JSON nested `BODY_DEPTH` objects deep, distinct per `n` (identical bodies are duplicates). */
function nestedBody(n: number): string {
  let value: unknown = { n, secret: 'tok_live_0123456789' };
  for (let depth = 1; depth < BODY_DEPTH; depth += 1) value = { k: 'ab', c: value };
  return JSON.stringify({ type: 'flood', pad: 'x'.repeat(180), c: value });
}

const percentile = (values: readonly number[], p: number) => nearestRank([...values].sort((a, b) => a - b), p);

// On both stores, behind the embedded log: the work is the router's and recorder's, and on the Kafka mock of
// a loaded test machine the trickle alone already took seconds (p99 2.7 s at load 17), which says nothing
// about one organization holding up another.
for (const store of STORE_TARGETS) describe(`One organization's expensive events do not hold up another's [${store.name}]`, () => {
  const target = embeddedLogOn(store);
  const settleMs = 30_000;
  let harness: RelayHarness;
  const sinks: HttpSink[] = [];

  before(async function () {
    this.timeout(60_000);
    // Two threads: the pipeline runs on a thread of its own, as it does on a machine with cores to spare.
    harness = await startRelayHarness(this, target, { RELAY_THREADS: '2' });
  });
  after(async function () {
    this.timeout(30_000);
    await Promise.all(sinks.map((sink) => sink.close()));
    await harness?.stop();
  });

  async function created(api: RelayHarness['api'], path: string, body: object): Promise<string> {
    const answer = await api('POST', path, { body });
    expect(answer.status, answer.text).to.equal(201);
    return answer.body.id as string;
  }

  /** A source of the organization whose key `api` holds, routed to a new sink. */
  async function routedSource(api: RelayHarness['api'], slug: string, settings: object = {}): Promise<HttpSink> {
    const sink = await startHttpSink([respond(200)]);
    sinks.push(sink);
    const sourceId = await created(api, '/api/sources', { name: slug, slug, ...settings });
    const destinationId = await created(api, '/api/destinations', { name: `${slug} receiver`, url: sink.url });
    await created(api, '/api/routes', { sourceId, destinationId });
    return sink;
  }

  /** Posts `count` bodies at `perSecond`, open loop, and resolves with each event's id and when its post started. */
  async function postAtRate(path: string, perSecond: number, count: number, body: (n: number) => string): Promise<Map<string, number>> {
    const postedAt = new Map<string, number>();
    const posts: Promise<void>[] = [];
    const start = performance.now();
    for (let n = 0; n < count; n += 1) {
      const due = start + (n * 1000) / perSecond;
      if (due > performance.now()) await sleep(due - performance.now());
      const startedAt = Date.now();
      posts.push(
        harness.api('POST', path, { key: null, rawBody: body(n), headers: { 'content-type': 'application/json' } }).then((answer) => {
          expect(answer.status, answer.text).to.equal(200);
          postedAt.set(answer.body.eventId as string, startedAt);
        }),
      );
    }
    await Promise.all(posts);
    return postedAt;
  }

  /** Scrapes /metrics until `until` settles; each scrape's status and duration. */
  async function scrapesUntil(until: Promise<unknown>): Promise<{ status: number; ms: number }[]> {
    let done = false;
    void until.finally(() => (done = true));
    const scrapes: { status: number; ms: number }[] = [];
    while (!done) {
      const started = performance.now();
      const answer = await fetch(`${harness.relay.metricsUrl}/metrics`);
      await answer.text();
      scrapes.push({ status: answer.status, ms: Math.round(performance.now() - started) });
      await sleep(500);
    }
    return scrapes;
  }

  async function deliveredAt(sink: HttpSink, postedAt: Map<string, number>): Promise<number[]> {
    await waitFor(`${postedAt.size} deliveries at ${sink.url}`, () => (sink.requests.filter((request) => postedAt.has(String(request.headers['x-relay-event-id']))).length >= postedAt.size ? true : undefined), isDefined, settleMs);
    return sink.requests.flatMap((request) => {
      const posted = postedAt.get(String(request.headers['x-relay-event-id']));
      return posted === undefined ? [] : [request.receivedAt - posted];
    });
  }

  it(`keeps the other organization's p99 under ${OTHER_P99_BOUND_MS} ms and /metrics answering through ${FLOOD_PER_SECOND}/s of ${BODY_DEPTH}-deep bodies under the mask ${HEAVIEST_MASK_PATH}`, async function () {
    this.timeout(FLOOD_SECONDS * 1000 + settleMs * 3);
    const other = await harness.relay.store.organizations.create('org-b', 'business');
    const { key } = await harness.relay.store.apiKeys.create(other.id, 'test', 'admin');
    const otherApi: RelayHarness['api'] = (method, path, options = {}) => harness.api(method, path, { key, ...options });
    const floodSink = await routedSource(harness.api, 'flooded', { maskFields: [HEAVIEST_MASK_PATH] });
    const otherSink = await routedSource(otherApi, 'steady');
    expect(Buffer.byteLength(nestedBody(0))).to.be.within(1100, 1300);
    // The trickle alone first, for the message: what this machine gives without the flood.
    const alone = await deliveredAt(otherSink, await postAtRate('/ingest/org-b/steady', TRICKLE_PER_SECOND, 4 * TRICKLE_PER_SECOND, (n) => JSON.stringify({ type: 'alone', n })));

    const flood = postAtRate('/ingest/default/flooded', FLOOD_PER_SECOND, FLOOD_PER_SECOND * FLOOD_SECONDS, nestedBody);
    const trickle = postAtRate('/ingest/org-b/steady', TRICKLE_PER_SECOND, TRICKLE_PER_SECOND * FLOOD_SECONDS, (n) => JSON.stringify({ type: 'beside', n }));
    const [scrapes, floodPosted, tricklePosted] = await Promise.all([scrapesUntil(Promise.all([flood, trickle])), flood, trickle]);

    const otherLatencies = await deliveredAt(otherSink, tricklePosted);
    const p99 = percentile(otherLatencies, 99);
    // Should it fail: which events were late, by when they were posted (ms into the flood).
    const floodStart = Math.min(...tricklePosted.values());
    const late = otherSink.requests
      .filter((request) => tricklePosted.has(String(request.headers['x-relay-event-id'])))
      .map((request) => ({ at: tricklePosted.get(String(request.headers['x-relay-event-id']))! - floodStart, latency: request.receivedAt - tricklePosted.get(String(request.headers['x-relay-event-id']))! }))
      .filter(({ latency }) => latency >= OTHER_P99_BOUND_MS)
      .map(({ at, latency }) => `+${at}: ${latency} ms`);
    const slowestScrape = Math.max(...scrapes.map((scrape) => scrape.ms));
    const aloneFigures = `alone p50/p99 ${percentile(alone, 50)}/${percentile(alone, 99)} ms`;
    console.log(
      `      other organization, ${otherLatencies.length} events: ingest-to-delivery p50/p99 ${percentile(otherLatencies, 50)}/${p99} ms during the flood (${aloneFigures}); ` +
        `${scrapes.length} scrapes of /metrics during the flood, the slowest ${slowestScrape} ms`,
    );
    expect(p99, `the other organization’s ingest-to-delivery p99 during the flood (${aloneFigures}); late: ${late.join(', ')}`).to.be.below(OTHER_P99_BOUND_MS);
    expect(scrapes.every((scrape) => scrape.status === 200), `scrape statuses ${scrapes.map((scrape) => scrape.status).join(',')}`).to.equal(true);
    expect(slowestScrape, 'the slowest scrape of /metrics during the flood').to.be.below(SCRAPE_BOUND_MS);
    // A 200 is a promise: the flooding organization's events are delivered too, whole and unmasked.
    const floodLatencies = await deliveredAt(floodSink, floodPosted);
    expect(floodLatencies).to.have.length(floodPosted.size);
  });
});
