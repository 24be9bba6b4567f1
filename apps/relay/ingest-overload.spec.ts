import { expect } from 'chai';
import { Agent, request } from 'undici';
import { BACKEND_TARGETS, type BackendLocation } from '../../libs/testing/backend-targets.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { API_KEY, configurePipeline, ENCRYPTION_KEY, openSharedStore, type Pipeline } from '../../testing/pipeline-fixture.js';
import { printOutputOnFailure, startRelayProcess, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import type { Store } from '../../libs/store/store.js';

/**
 * Past its in-flight bound (RELAY_INGEST_MAX_IN_FLIGHT) ingest refuses at once with `503 OVERLOADED`
 * rather than queueing. The bound is a count, not a rate, so the test offers more than it on any
 * machine: many more senders at once than the bound lets in, each sending as soon as its last answer came.
 */
const MAX_IN_FLIGHT = 4;
/** Senders at once, each on its own kept-alive connection: well past the bound. */
const SENDERS = 32;
/** Offered after one warm-up webhook. */
const WEBHOOKS = 1_000;
/**
 * The 503s ingest may answer here: the shed, and the wait budget's answer when the log's append took
 * longer than it (a machine starved of CPU); both promise nothing, and both carry Retry-After.
 */
const UNAVAILABLE_CODES = ['OVERLOADED', 'BROKER_UNAVAILABLE'];
/** DESIGN 7 "Unavailable answers": ingest answers within 1 s in every case. */
const ANSWER_WITHIN_MS = 1_000;
/** The bound for being back at the sustained rate after an overload. */
const RECOVERED_WITHIN_MS = 5_000;

interface Answer {
  status: number;
  ms: number;
  eventId?: string;
  code?: string;
  retryAfterHeader?: string;
  retryAfter?: number;
}

async function send(dispatcher: Agent, url: string, marker: string): Promise<Answer> {
  const started = performance.now();
  const response = await request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ marker }) });
  const { eventId, code, retryAfter } = (await response.body.json()) as { eventId?: string; code?: string; retryAfter?: number };
  const retryAfterHeader = response.headers['retry-after'];
  return { status: response.statusCode, ms: performance.now() - started, eventId, code, retryAfter, retryAfterHeader: typeof retryAfterHeader === 'string' ? retryAfterHeader : undefined };
}

const [embeddedSqlite] = BACKEND_TARGETS;

describe(`ingest past its in-flight bound [${embeddedSqlite!.name}, an all-in-one relay process]`, function () {
  this.timeout(120_000);
  let location: BackendLocation | undefined;
  let sink: HttpSink;
  let relay: RelayProcess | undefined;
  let store: Store | undefined;
  let pipeline: Pipeline;
  let dispatcher: Agent;

  before(async function () {
    location = await embeddedSqlite!.prepare(this);
    sink = await startHttpSink([respond(200)]);
    relay = await startRelayProcess('all', {
      ...location.env,
      RELAY_API_KEY: API_KEY,
      RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
      // The plan's limit (10,000/s a source) is far above what is offered: the shed, not the rate limit, answers.
      RELAY_DEFAULT_PLAN: 'enterprise',
      RELAY_INGEST_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
    });
    pipeline = await configurePipeline(relay.url, `${sink.url}/hooks`);
    dispatcher = new Agent({ connections: SENDERS, pipelining: 1 });
  });

  printOutputOnFailure(() => [relay]);

  after(async function () {
    await dispatcher?.close();
    await relay?.kill();
    await store?.close();
    await sink?.close();
    await location?.cleanup();
  });

  it('answers every request within 1 s with 200 or 503 OVERLOADED and Retry-After, loses no acknowledged webhook, and takes webhooks again at once after', async () => {
    const url = `${relay!.url}${pipeline.ingestPath}`;
    // A relay already taking webhooks: its first request's code paths are compiled before the burst.
    const warm = await send(dispatcher, url, 'warm-up');
    expect(warm.status, 'the warm-up webhook').to.equal(200);
    const answers: Answer[] = [];
    let next = 0;
    const sender = async () => {
      while (next < WEBHOOKS) answers.push(await send(dispatcher, url, `burst-${next++}`));
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    const burstEndedAt = performance.now();

    const shed = answers.filter((answer) => answer.status === 503);
    const acknowledged = answers.filter((answer) => answer.status === 200);
    const overloaded = shed.filter((answer) => answer.code === 'OVERLOADED').length;
    console.log(`      ${WEBHOOKS} offered by ${SENDERS} senders at a bound of ${MAX_IN_FLIGHT}: ${acknowledged.length} acknowledged, ${shed.length} answered 503 (${overloaded} OVERLOADED); slowest answer ${Math.max(...answers.map((answer) => answer.ms)).toFixed(0)} ms`);
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 503).map((answer) => answer.status), 'answers neither 200 nor 503').to.deep.equal([]);
    expect(answers.filter((answer) => answer.ms > ANSWER_WITHIN_MS).map((answer) => Math.round(answer.ms)), 'answers slower than 1 s (ms)').to.deep.equal([]);
    expect(shed.filter((answer) => answer.code === 'OVERLOADED').length, 'requests shed as OVERLOADED').to.be.greaterThan(0);
    expect(acknowledged.length, 'requests acknowledged').to.be.greaterThan(0);
    for (const answer of shed) {
      expect(answer.code).to.be.oneOf(UNAVAILABLE_CODES);
      expect(answer.retryAfterHeader, 'Retry-After').to.match(/^[1-9]\d*$/);
      expect(answer.retryAfter).to.equal(Number(answer.retryAfterHeader));
    }

    // Back at once: one sender at a time is under the bound, so every webhook is taken.
    const after: Answer[] = [];
    for (let index = 0; index < 20; index += 1) after.push(await send(dispatcher, url, `after-${index}`));
    expect(after.map((answer) => answer.status), 'answers after the burst').to.deep.equal(after.map(() => 200));
    expect(performance.now() - burstEndedAt, 'time to take 20 webhooks after the burst (ms)').to.be.below(RECOVERED_WITHIN_MS);

    const owed = [warm, ...acknowledged, ...after].map((answer) => answer.eventId!);
    await waitFor(
      `every acknowledged webhook (${owed.length}) at the destination; read: how many have not arrived`,
      async () => {
        const delivered = new Set(sink.requests.map((received) => String(received.headers['x-relay-event-id'])));
        return owed.filter((eventId) => !delivered.has(eventId)).length;
      },
      (missing) => missing === 0,
      60_000,
    );
    store = await openSharedStore(location!.env);
    const stored = await store.sql.all<{ id: string }>('SELECT id FROM events');
    const storedIds = new Set(stored.map((row) => row.id));
    expect(owed.filter((eventId) => !storedIds.has(eventId)), 'acknowledged events not stored').to.deep.equal([]);
    // Nothing refused was kept: a shed request leaves no event behind.
    expect(stored.length, 'events stored').to.equal(owed.length);
  });
});
