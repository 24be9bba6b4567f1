import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { apiClient, type ApiCall } from '../../testing/api-client.js';
import { hostileClient, type HostileAnswer } from '../../libs/testing/hostile-client.js';
import { createHostileRequests, type FuzzTargets, type HostileRequest } from '../../libs/testing/hostile-requests.js';
import { startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { seededRandom } from '../../libs/testing/seeded-random.js';
import { watchStore } from '../../libs/testing/store-digest.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { created } from '../../testing/api-harness.js';
import { startRelay, type RunningRelay } from './relay.js';
import { TEST_RELAY_ENV } from '../../libs/testing/test-relay-env.js';

/** The same 20,000 on each store (quiet machine: 17 s on SQLite, 43 s on PostgreSQL, whose store checks are query rounds). */
const REQUESTS = 20_000;
const SEED = 17;
const KEY_A = 'test-key-hostile-org-a-0001';
const STACK_FRAME = '    at ';

/**
 * The whole relay (api and gateway on one port) under 20,000 malformed and hostile requests over every
 * routed endpoint (generated from its own route table, so a new endpoint is covered without a change
 * here). Unknown HTTP methods are left out (their 405s are checked in bad-input.spec). Every answer is
 * checked: never a 5xx or a stack trace, every error in the {error, message, code} envelope, and the
 * store unchanged by every refused request and every read. Deterministic: a seeded generator.
 */
describeEachStore('Hostile input over every endpoint', (target) => {
  let relay: RunningRelay;
  let sink: HttpSink;
  let cleanup: () => Promise<void>;
  let targets: FuzzTargets;
  let dataDir: string;

  before(async function () {
    this.timeout(60_000);
    const location = await target.prepare(this);
    dataDir = location.dataDir;
    sink = await startHttpSink();
    relay = await startRelay(
      loadConfig({
        ...TEST_RELAY_ENV,
        PORT: '0',
        HOST: '127.0.0.1',
        RELAY_DATA_DIR: location.dataDir,
        DATABASE_URL: location.databaseUrl,
        RELAY_API_KEY: KEY_A,
        RELAY_ORG: 'org-a',
        RELAY_DEFAULT_PLAN: 'enterprise',
        // A small payload limit, so that bodies above it (413) cost little to send.
        RELAY_ENTERPRISE_MAX_PAYLOAD_BYTES: '65536',
        RELAY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
        RELAY_PUBLIC_URL: 'https://relay.example.test',
        // The requests reach every endpoint back to back with one key: the per-key limit would answer most of them 429.
        RELAY_API_REQUESTS_PER_SECOND: '1000000',
      }),
      { logger: createLogger({ level: 'silent' }) },
    );
    cleanup = async () => {
      await relay?.close();
      await sink?.close();
      await location.cleanup();
    };
    targets = await createFixtures(relay, sink);
  });

  after(async () => {
    await cleanup?.();
  });

  it(`answers ${REQUESTS} hostile requests with no 5xx, every error in the envelope, and no change from any refusal`, async function () {
    this.timeout(15 * 60_000);
    const next = createHostileRequests(seededRandom(SEED), targets);
    const client = hostileClient(relay.url);
    const statuses = new Map<number, number>();
    const hits = new Map<string, number>();
    const failures: string[] = [];
    const started = Date.now();
    const store = watchStore(relay.store.sql, dataDir);
    /** Time spent reading the store, apart from sending. */
    let checkingMs = 0;
    let baseline = await store.snapshot();
    /** Requests since the store was last seen unchanged (reads and refusals). */
    let since: string[] = [];
    try {
      for (let index = 0; index < REQUESTS && failures.length < 20; index += 1) {
        const request = next(index);
        const endpoint = `${request.endpoint.method} ${request.endpoint.path}`;
        hits.set(endpoint, (hits.get(endpoint) ?? 0) + 1);
        let answer: HostileAnswer;
        try {
          answer = await client.send(request);
        } catch (error) {
          failures.push(`${shown(request)}: ${(error as Error).message}`);
          continue;
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const fault = answerFault(request, answer);
        if (fault) failures.push(`${shown(request)}: ${fault}`);
        since.push(request.label);
        if (request.method === 'GET') continue;
        const at = Date.now();
        if (answer.status >= 200 && answer.status < 300) {
          if (!(await settled(relay, answer))) failures.push(`${shown(request)}: the pipeline did not settle after its ${answer.status}`);
          baseline = await store.snapshot();
          since = [];
        } else {
          const { change, snapshot } = await store.changesSince(baseline, Date.now());
          if (change) failures.push(`the store changed (${change}) during: ${since.slice(-5).join(' | ')}`);
          baseline = snapshot;
          since = [];
        }
        checkingMs += Date.now() - at;
      }
    } finally {
      client.close();
      store.close();
    }
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `      ${REQUESTS} requests in ${seconds.toFixed(1)} s (${(checkingMs / 1000).toFixed(1)} s of it checking the store; seed ${SEED}); answers: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`,
    );
    expect(failures, failures.join('\n')).to.deep.equal([]);
    const missed = targets.endpoints.filter((e) => e.method !== 'HEAD' && (hits.get(`${e.method} ${e.path}`) ?? 0) < 5);
    expect(missed, 'endpoints the run barely reached').to.deep.equal([]);
  });
});

/** What is wrong with an answer, or null. */
function answerFault(request: HostileRequest, answer: HostileAnswer): string | null {
  // A raw request the HTTP parser rejects may be closed without an answer; anything else must answer.
  if (answer.status === 0) return request.raw ? null : 'no answer';
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.text.includes(STACK_FRAME)) return 'a stack trace in the answer';
  if (answer.status < 400) return null;
  if (!answer.contentType.includes('application/json')) return `error ${answer.status} as ${answer.contentType}: ${answer.text.slice(0, 200)}`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `error ${answer.status} with a body that is not JSON: ${answer.text.slice(0, 200)}`;
  }
  const envelope = body as Record<string, unknown>;
  const inEnvelope = ['error', 'message', 'code'].every((field) => typeof envelope[field] === 'string' && envelope[field] !== '');
  return inEnvelope ? null : `error ${answer.status} outside the envelope: ${answer.text.slice(0, 200)}`;
}

function shown(request: HostileRequest): string {
  const body = request.body ? ` body ${request.body.length} B ${JSON.stringify(request.body.subarray(0, 120).toString('utf8'))}` : '';
  return `${request.label} ${JSON.stringify(request.path.slice(0, 200))}${body}`;
}

/** Waits for the pipeline to finish what an accepted request started: its event stored, no delivery in flight, no replay job running. */
async function settled(relay: RunningRelay, answer: HostileAnswer): Promise<boolean> {
  const eventId = /"eventId":"(evt_\w+)"/.exec(answer.text)?.[1];
  const sql = relay.store.sql;
  return waitFor(
    'the pipeline to settle',
    async () => {
      const [event] = eventId ? await sql.all('SELECT status FROM events WHERE id = ?', [eventId]) : [{ status: 'none' }];
      const [open] = await sql.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM deliveries WHERE status IN ('pending', 'retrying')");
      // A replay job the fuzz got right works in the background after its 202.
      const [replaying] = await sql.all<{ n: number | string }>("SELECT COUNT(*) AS n FROM replays WHERE status = 'running'");
      return event !== undefined && Number(open!.n) === 0 && Number(replaying!.n) === 0;
    },
    (done) => done,
    10_000,
    5,
  ).then(
    () => true,
    () => false,
  );
}

/**
 * Organization A (the caller): sources that accept, verify, are disabled or filter addresses, a
 * destination at a live sink, a route, stored events. Organization B: ids the caller must never reach.
 */
async function createFixtures(relay: RunningRelay, sink: HttpSink): Promise<FuzzTargets> {
  const a = apiClient(relay.url, KEY_A);
  const orgB = await relay.store.organizations.create('org-b', 'pro');
  const b = apiClient(relay.url, (await relay.store.apiKeys.create(orgB.id, 'fuzz', 'admin')).key);
  const source = (api: ApiCall, body: Record<string, unknown>) => created(api, '/api/sources', body).then((s) => s.id as string);
  const open = await source(a, { name: 'Open', slug: 'open' });
  const signed = await source(a, {
    name: 'Signed',
    slug: 'signed',
    verificationConfig: { type: 'hmac', secret: 'fuzz-secret', algorithm: 'sha256', header: 'x-signature', encoding: 'hex' },
    rejectInvalidSignatures: true,
    maskFields: ['$.card'],
  });
  const disabled = await source(a, { name: 'Disabled', slug: 'disabled', enabled: false });
  const filtered = await source(a, { name: 'Filtered', slug: 'filtered', ipFilterMode: 'allowlist', ipAllowlist: ['203.0.113.7'] });
  const destination = (await created(a, '/api/destinations', { name: 'Sink', url: `${sink.url}/hook`, authType: 'bearer', authConfig: { token: 'sink-token-0001' } })).id as string;
  const delivering = (await created(a, '/api/routes', { sourceId: signed, destinationId: destination })).id as string;
  const ingest = apiClient(relay.url, null);
  const events: string[] = [];
  for (const [slug, body] of [['open', '{"card":"4242","n":1}'], ['open', 'plain text'], ['signed', '{"card":"4242","n":2}']] as const) {
    const headers: Record<string, string> = { 'content-type': body.startsWith('{') ? 'application/json' : 'text/plain', authorization: 'Bearer provider-secret-token' };
    if (slug === 'signed') headers['x-signature'] = createHmac('sha256', 'fuzz-secret').update(body).digest('hex');
    const answer = await ingest('POST', `/ingest/org-a/${slug}`, { rawBody: body, headers });
    expect(answer.status, answer.text).to.equal(200);
    events.push(answer.body.eventId);
  }
  await waitFor('the fixture events to be delivered', () => a('GET', '/api/events?status=delivered'), (r) => r.body.data.length === events.length);
  // No route may lead a stored event anywhere during the run: a replay the fuzz gets right would start
  // deliveries that change the store long after their 202. The route left joins the source that refuses all.
  expect((await a('DELETE', `/api/routes/${delivering}`)).status).to.equal(204);
  const route = (await created(a, '/api/routes', { sourceId: disabled, destinationId: destination })).id as string;
  const foreignSource = await source(b, { name: 'Theirs', slug: 'theirs', verificationConfig: { type: 'codehost' }, rejectInvalidSignatures: true });
  const foreignDestination = (await created(b, '/api/destinations', { name: 'Theirs', url: `${sink.url}/theirs` })).id as string;
  const ids = { src: [open, signed, disabled, filtered], dst: [destination], rte: [route], evt: events };
  return {
    endpoints: relay.endpoints,
    ids,
    keep: new Set(Object.values(ids).flat()),
    foreignIds: [foreignSource, foreignDestination],
    ingestTargets: [['org-a', 'open'], ['org-a', 'signed'], ['org-a', 'signed'], ['org-a', 'disabled'], ['org-a', 'filtered'], ['org-a', 'nowhere'], ['org-b', 'theirs'], ['nobody', 'open']],
    apiKey: KEY_A,
  };
}
