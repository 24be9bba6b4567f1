import { expect } from 'chai';
import { dedupKeys } from '../../libs/dedup/dedup-keys.js';
import { newId } from '../../libs/ids/ids.js';
import type { Store } from '../../libs/store/store.js';
import { BACKEND_TARGETS, describeEachBackend, embeddedLogOn, type BackendLocation, type BackendTarget } from '../../libs/testing/backend-targets.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { unusedLoopbackPort } from '../../libs/testing/free-port.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { consumedAll } from '../../libs/testing/consumer-lag.js';
import { waitFor, isDefined, isTrue } from '../../libs/testing/wait-for.js';
import { API_KEY, configurePipeline, ENCRYPTION_KEY, openSharedStore, type Pipeline } from '../../testing/pipeline-fixture.js';
import { printOutputOnFailure, startRelayProcess, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { useRelayHarness } from '../../testing/relay-harness.js';
import { DELIVERER_GROUP, destinationTopic, LANES_GROUP, LANES_TOPIC, INGEST_TOPIC, ROUTER_GROUP } from '../../libs/pipeline/topology.js';
import { isGatewayRole } from '../gateway/gateway-role.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../libs/testing/otlp-receiver.js';
import { parentContext } from '../../libs/tracing/relay-tracer.js';

/**
 * The `200` promise under crashes: an all-in-one relay process on the embedded default is killed with
 * SIGKILL ten times while webhooks are ingested, and restarted each time on the same port and data
 * directory. Every webhook the gateway acknowledged must reach the destination at least once. The kills
 * land anywhere; the one window they found (between the dedup claim and the append to the log) is also
 * pinned down deterministically below. The second requests the kills cost are bounded too
 * (`DUPLICATES_BOUND` on the embedded log, with SQLite and with PostgreSQL; `KAFKA_DUPLICATES_BOUND`).
 * It runs once more with an ordered destination (`ordering: "source"`, one request at a time, so fewer webhooks), which must also have seen
 * them in order, and on Kafka + PostgreSQL (three kills, restarted on the same cluster and database).
 */
/** Webhooks in flight at once: a provider retrying with modest concurrency. */
const SENDERS = 16;
/** Between tries of a webhook that was not acknowledged (the process is down or starting). */
const RETRY_PAUSE_MS = 20;


type Answer = { acknowledged: true; eventId: string; status: 'received' | 'duplicate' } | { acknowledged: false };

/** One try: only `200` with `received` or `duplicate` is an acknowledgement; anything else is tried again. */
async function tryOnce(url: string, body: string): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  } catch {
    // Refused or reset: the process is down or was killed with this request in flight.
    return { acknowledged: false };
  }
  const text = await response.text().catch(() => undefined);
  // Killed while the answer was on its way: not acknowledged as far as the provider can tell.
  if (text === undefined) return { acknowledged: false };
  if (response.status === 200) {
    const answer = JSON.parse(text) as { eventId: string; status: string };
    if (answer.status === 'received' || answer.status === 'duplicate') return { acknowledged: true, eventId: answer.eventId, status: answer.status };
  }
  // A refusal that a retry cannot change means the test itself is wrong; stop rather than spin.
  if (response.status >= 400 && response.status < 500 && response.status !== 429) throw new Error(`ingest answered ${response.status}: ${text}`);
  return { acknowledged: false };
}

/**
 * Delivery ids of one source's line are created in the order its events were received, so the sink
 * must see them increasing, each repeated at most right after itself: the head in flight at a kill
 * is sent again (at least once); nothing behind it may overtake it.
 */
function outOfOrder(deliveryIds: string[]): string[] {
  const faults: string[] = [];
  for (let index = 1; index < deliveryIds.length; index += 1) {
    const [previous, current] = [deliveryIds[index - 1]!, deliveryIds[index]!];
    if (current !== previous && current < previous) faults.push(`${current} after ${previous} (request ${index})`);
  }
  return faults;
}

/**
 * Every request carried a sampled `traceparent` (export is on), and the attempt spans it names reached the
 * receiver, with spans of every stage: the spans buffered in a killed process are lost, the chain is not.
 */
function expectTracedRequests(sink: HttpSink, receiver: OtlpReceiver): void {
  const parents = sink.requests.map((request) => parentContext(String(request.headers.traceparent)));
  expect(parents.filter((parent) => parent?.traceFlags !== 1).length, 'requests without a sampled traceparent').to.equal(0);
  const spans = receiver.spans();
  // Only the deliverer's and recorder's: the ordered run's ingest spans were all lost to kills once (not explained yet).
  expect(new Set(spans.map((span) => span.name)), 'stages exported').to.include.keys('attempt', 'record attempt');
  const attempts = new Set(spans.filter((span) => span.name === 'attempt').map((span) => span.spanId));
  const exported = parents.filter((parent) => attempts.has(parent!.spanId)).length;
  console.log(`      ${spans.length} spans exported; ${exported} of ${parents.length} requests' attempt spans among them`);
  expect(exported, "requests whose attempt span was exported").to.be.greaterThan(0);
}

const [embeddedSqlite, kafkaPostgres] = BACKEND_TARGETS as [BackendTarget, BackendTarget];
const embeddedPostgres = embeddedLogOn(STORE_TARGETS[1]!);

/**
 * Second requests for an event allowed on the embedded log, as shares of the acknowledged webhooks
 * (decisions 0102 and 0103). Of attempts sent again although their outcome was recorded, which the relay
 * can know of: issue 56's 1 % (measured 0). Of all, a ceiling: what is left are requests in flight at the
 * kills, whose answers the killed process never read and at least once must send again (each arrived at
 * the sink within a few milliseconds of the kill): 1.2-2.2 % on a 2-core machine.
 */
const DUPLICATES_BOUND = { reported: 0.01, all: 0.04 };
/**
 * On Kafka + PostgreSQL, three kills of 2,000. Of attempts the relay knew done, 1 % as on the embedded log:
 * with the journal on Kafka and the second look for the same attempt here (decision 0105), 0 in 3 runs on
 * the local 4.4.0 cluster; before, up to 38 (1.9 %) locally and 37 in CI. Of all, a ceiling of 8 %
 * against a regression: what is left is in flight at the kills, 0.00-3.55 % locally (up to 8.05 % in CI before).
 */
const KAFKA_DUPLICATES_BOUND = { reported: 0.01, all: 0.08 };

/** Attempts made twice although the first one's outcome was recorded: the relay knew it was done. */
async function attemptsMadeTwice(store: Store): Promise<number> {
  const [row] = await store.sql.all<{ count: number }>(
    'SELECT COUNT(*) AS count FROM (SELECT delivery_id FROM attempts GROUP BY delivery_id, attempt_number HAVING COUNT(*) > 1) AS twice',
  );
  return Number(row?.count ?? 0);
}

for (const { target, ordering, WEBHOOKS, KILLS, DUPLICATES } of [
  { target: embeddedSqlite, ordering: 'none', WEBHOOKS: 10_000, KILLS: 10, DUPLICATES: DUPLICATES_BOUND },
  { target: embeddedPostgres, ordering: 'none', WEBHOOKS: 10_000, KILLS: 10, DUPLICATES: DUPLICATES_BOUND },
  { target: embeddedSqlite, ordering: 'source', WEBHOOKS: 2_000, KILLS: 10, DUPLICATES: undefined },
  // Fewer kills: each restart waits for the dead process's group sessions to end and for each consumer
  // group to be joined again (8-10 s on the local cluster).
  { target: kafkaPostgres, ordering: 'none', WEBHOOKS: 2_000, KILLS: 3, DUPLICATES: KAFKA_DUPLICATES_BOUND },
] as const) describe(`an all-in-one relay process killed with SIGKILL while it ingests [${target.name}, ordering ${ordering}]`, function () {
  // About a minute on a 2-CPU machine; generous because CI machines vary.
  this.timeout(600_000);
  let location: BackendLocation | undefined;
  let env: Record<string, string>;
  let sink: HttpSink;
  let relay: RelayProcess | undefined;
  let store: Store | undefined;
  let pipeline: Pipeline;
  let receiver: OtlpReceiver | undefined;

  before(async function () {
    location = await target.prepare(this);
    sink = await startHttpSink([respond(200)]);
    // Tracing exported all along: the kills must not cost a webhook, whatever spans they cost.
    receiver = await startOtlpReceiver();
    env = {
      ...location.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      PORT: String(await unusedLoopbackPort()),
      RELAY_API_KEY: API_KEY,
      RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
      RELAY_RETRY_JITTER: '0',
      // 10,000 requests per second per source: the plan's rate limit is not what this is about.
      RELAY_DEFAULT_PLAN: 'enterprise',
    };
    relay = await startRelayProcess('all', env);
    pipeline = await configurePipeline(relay.url, `${sink.url}/hooks`, { ordering });
  });

  printOutputOnFailure(() => [relay]);

  after(async function () {
    await relay?.kill();
    await store?.close();
    await sink?.close();
    await receiver?.close();
    await location?.cleanup();
  });

  it(`delivers every acknowledged webhook of ${WEBHOOKS} at least once across ${KILLS} kills, and leaves no delivery pending`, async function () {
    const startedAt = Date.now();
    const ingestUrl = `${relay!.url}${pipeline.ingestPath}`;
    const run = Date.now().toString(36);
    /** eventId -> marker of the webhook it acknowledged. */
    const acknowledged = new Map<string, string>();
    /** Events acknowledged only by a `duplicate` answer to a retry (the first try's answer was lost). */
    const acknowledgedAsDuplicate = new Set<string>();
    let tries = 0;
    let next = 0;
    const sender = async () => {
      while (next < WEBHOOKS) {
        const marker = `${run}-${next++}`;
        const body = JSON.stringify({ marker, order: { lines: 3, note: 'no loss' } });
        for (;;) {
          tries += 1;
          const answer = await tryOnce(ingestUrl, body);
          if (answer.acknowledged) {
            // A retry answered `duplicate` names the event its first try created: the same marker.
            const known = acknowledged.get(answer.eventId);
            expect(known ?? marker, `event ${answer.eventId} acknowledged for two webhooks`).to.equal(marker);
            acknowledged.set(answer.eventId, marker);
            if (answer.status === 'duplicate') acknowledgedAsDuplicate.add(answer.eventId);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
        }
      }
    };
    const load = Promise.all(Array.from({ length: SENDERS }, sender));
    // Observed at `await load`; until then a sender's failure must not count as unhandled.
    load.catch(() => undefined);

    const downtimes: number[] = [];
    for (let kill = 1; kill <= KILLS; kill += 1) {
      // Spread over the load, the last one well before its end.
      await waitFor(`acknowledgements before kill ${kill}`, async () => acknowledged.size, (count) => count >= (kill * WEBHOOKS) / (KILLS + 1), 120_000);
      const killedAt = Date.now();
      await relay!.kill();
      relay = await startRelayProcess('all', env);
      downtimes.push(Date.now() - killedAt);
    }
    await load;
    const ingestedAt = Date.now();

    const deliveredIds = () => new Set(sink.requests.map((request) => String(request.headers['x-relay-event-id'])));
    await waitFor(
      `every acknowledged webhook (${acknowledged.size}) at the destination; read: those that have not arrived`,
      async () => {
        const delivered = deliveredIds();
        const missing = [...acknowledged.keys()].filter((eventId) => !delivered.has(eventId));
        return { missing: missing.length, acknowledgedAsDuplicate: missing.filter((eventId) => acknowledgedAsDuplicate.has(eventId)).length, first: missing.slice(0, 5) };
      },
      ({ missing }) => missing === 0,
      180_000,
    );
    store = await openSharedStore(env);
    const statuses = await waitFor(
      'every delivery to settle; read: deliveries by status',
      async () => Object.fromEntries((await store!.sql.all<{ status: string; count: number }>('SELECT status, COUNT(*) AS count FROM deliveries GROUP BY status')).map((row) => [row.status, Number(row.count)])),
      (counts) => !counts.pending && !counts.retrying,
      60_000,
    );

    const deliveriesPerEvent = new Map<string, number>();
    const eventsPerMarker = new Map<string, Set<string>>();
    for (const request of sink.requests) {
      const eventId = String(request.headers['x-relay-event-id']);
      deliveriesPerEvent.set(eventId, (deliveriesPerEvent.get(eventId) ?? 0) + 1);
      const { marker } = JSON.parse(request.body.toString('utf8')) as { marker: string };
      if (acknowledged.has(eventId)) expect(marker, `body delivered for ${eventId}`).to.equal(acknowledged.get(eventId));
      eventsPerMarker.set(marker, (eventsPerMarker.get(marker) ?? new Set()).add(eventId));
    }
    const redelivered = [...deliveriesPerEvent.values()].filter((count) => count > 1).length;
    const duplicateRequests = sink.requests.length - deliveriesPerEvent.size;
    const markersAsSeveralEvents = [...eventsPerMarker.values()].filter((ids) => ids.size > 1).length;
    const madeTwice = await attemptsMadeTwice(store);
    const events = await store.sql.all<{ id: string; status: string }>('SELECT id, status FROM events');
    const eventStatus = new Map(events.map((event) => [event.id, event.status]));
    console.log(
      `      ${acknowledged.size} acknowledged (${acknowledgedAsDuplicate.size} only by a duplicate answer to a retry) in ${tries} tries over ${((ingestedAt - startedAt) / 1000).toFixed(1)} s, ` +
        `${KILLS} kills (down ${Math.min(...downtimes)}..${Math.max(...downtimes)} ms each); all delivered after ${((Date.now() - startedAt) / 1000).toFixed(1)} s. ` +
        `Sink: ${sink.requests.length} requests, ${duplicateRequests} duplicates (${((100 * duplicateRequests) / acknowledged.size).toFixed(2)}% of acknowledged; ${madeTwice} attempts made again after their outcome was recorded; ${redelivered} events delivered more than once, one up to ${Math.max(...deliveriesPerEvent.values())} times), ` +
        `${markersAsSeveralEvents} webhooks stored as more than one event; ${events.length} events stored; deliveries ${JSON.stringify(statuses)}`,
    );

    expect(acknowledged.size).to.equal(WEBHOOKS);
    if (DUPLICATES) {
      expect(madeTwice, 'attempts sent again after their outcome was recorded').to.be.at.most(DUPLICATES.reported * acknowledged.size);
      expect(duplicateRequests, 'duplicate requests').to.be.at.most(DUPLICATES.all * acknowledged.size);
    }
    expect([...acknowledged.keys()].filter((eventId) => eventStatus.get(eventId) !== 'delivered'), 'acknowledged events not stored as delivered').to.deep.equal([]);
    expect(Object.keys(statuses), 'delivery statuses').to.deep.equal(['delivered']);
    expectTracedRequests(sink, receiver!);
    if (ordering === 'source') {
      expect(outOfOrder(sink.requests.map((request) => String(request.headers['x-relay-delivery-id']))), 'requests out of order').to.deep.equal([]);
    }
  });
});

describeEachBackend('a duplicate answer keeps the 200 promise', (target) => {
  const suite = useRelayHarness(target);
  let sink: HttpSink;

  before(async () => {
    sink = await suite.sink([respond(200)]);
  });

  it("when the first request's event never reached the log (killed between its dedup claim and its append), a retry answered duplicate gets it delivered, once", async function () {
    const settleMs = target.name.includes('Kafka') ? 40_000 : 10_000;
    this.timeout(settleMs * 3);
    const source = await suite.harness.api('POST', '/api/sources', { body: { name: 'Lost', slug: 'lost', dedupEnabled: false } });
    expect(source.status, source.text).to.equal(201);
    const destination = await suite.harness.api('POST', '/api/destinations', { body: { name: 'Sink', url: sink.url } });
    expect(destination.status, destination.text).to.equal(201);
    expect((await suite.harness.api('POST', '/api/routes', { body: { sourceId: source.body.id, destinationId: destination.body.id } })).status).to.equal(201);
    const body = '{"order":"lost at the worst moment"}';
    // What the kill left behind: the body's key claimed for an event the log never got.
    const lostEventId = newId('evt');
    const keys = dedupKeys({ source: source.body, rawBody: Buffer.from(body), headers: {} });
    const gateway = suite.harness.relay.roles.find(isGatewayRole)!;
    expect(await gateway.dedup.claim(source.body.id, keys, lostEventId, Date.now())).to.equal(null);
    // As a provider posts: again after a 503 with Retry-After (a copy's publish the loaded broker did not acknowledge in time).
    const ingest = () => suite.harness.send('/ingest/default/lost', body);
    const admin = suite.harness.relay.broker.admin();
    // Where the router publishes the destination's jobs: on Kafka the lanes (shared with the earlier
    // tests' destinations), on the embedded log the destination's own topic.
    const [group, topic] = target.name.includes('Kafka') ? [LANES_GROUP, LANES_TOPIC] : [DELIVERER_GROUP, destinationTopic(destination.body.id)];
    const jobsPublished = async () => (await admin.lag(group, [topic])).reduce((sum, partition) => sum + Number(partition.end), 0);
    const jobsBefore = await jobsPublished();

    const retry = await ingest();
    expect(retry.body).to.deep.equal({ eventId: lostEventId, status: 'duplicate' });
    await sink.waitForRequests(1, settleMs);
    expect(sink.requests[0]!.headers['x-relay-event-id']).to.equal(lostEventId);
    expect(sink.requests[0]!.body.toString()).to.equal(body);

    // Another duplicate of the event, now stored: its copy adds no second job.
    expect((await ingest()).body).to.deep.equal({ eventId: lostEventId, status: 'duplicate' });
    await waitFor('the router to take both copies', () => consumedAll(admin, ROUTER_GROUP, [INGEST_TOPIC]), isTrue, settleMs);
    expect((await jobsPublished()) - jobsBefore, 'delivery jobs published for the event').to.equal(1);
    await waitFor(`event ${lostEventId} stored as delivered`, async () => {
      const [event] = await suite.harness.relay.store.sql.all<{ status: string }>('SELECT status FROM events WHERE id = ?', [lostEventId]);
      return event?.status === 'delivered' ? true : undefined;
    }, isDefined, settleMs);
  });
});
