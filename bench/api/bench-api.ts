/**
 * Event list figures over a large store: GET /api/events page 1 and page 500, unfiltered, with sourceId and
 * status filters, the console's queries (status=failed alone, from/to windows of an hour and a day, and a
 * search with each), rare and broad searches, on SQLite and PostgreSQL. Target: p99 <= 50 ms for every query.
 * Events are bulk-inserted with multi-row INSERTs, then every query runs through the real HTTP API; a bare
 * node:http server answering a page-sized JSON body through the same client is the floor of the run.
 * A query whose warm-up takes over 500 ms per request is measured 20 times only.
 *
 * Run: node --import tsx bench/api/bench-api.ts [--events 1000000] [--stores sqlite,postgres] [--iterations 200]
 *   [--queries all|lists] [--keep] [--sqlite-data-dir DIR] [--postgres-url URL]
 * PostgreSQL: a fresh database on TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
 * `--queries lists` leaves out the searches (the 10,000,000-event target covers the lists only). `--keep`
 * leaves the seeded stores in place and prints how to name them; `--sqlite-data-dir`/`--postgres-url` run
 * on such a store without seeding it again, so seeding (minutes) and measuring (on a quiet machine) can be
 * apart. On PostgreSQL the rows are generated inside the database (seed-events.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { RunningRelay } from '../../apps/relay/relay.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { indexAllPending } from '../../libs/store/search-index.js';
import { forEachStoreRelay, type StoreKind } from '../each-store.js';
import { customerEmail, seedEvents } from './seed-events.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    iterations: { type: 'string', default: '200' },
    queries: { type: 'string', default: 'all' },
    keep: { type: 'boolean', default: false },
    'sqlite-data-dir': { type: 'string' },
    'postgres-url': { type: 'string' },
  },
});
let EVENTS = Number(args.events);
const ITERATIONS = Number(args.iterations);
/** Iterations of a query whose warm-up shows it takes seconds: enough for a p50, and the run still ends. */
const SLOW_ITERATIONS = 20;
const SLOW_MS = 500;
const SOURCES = 20;
const STEP_MS = 1000;
const API_KEY = 'bench-api-key-0123456789';
const HOUR_MS = 3_600_000;
const agent = new Agent({ connections: 1 });

interface Figures {
  query: string;
  total: number;
  totalExact: boolean | undefined;
  iterations: number;
  p50: number;
  p99: number;
}

interface Pagination {
  total: number;
  totalExact?: boolean;
}

async function get(url: string): Promise<Pagination> {
  const response = await request(url, { headers: { authorization: `Bearer ${API_KEY}` }, dispatcher: agent });
  const body = (await response.body.json()) as { pagination: Pagination };
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${JSON.stringify(body)}`);
  return body.pagination;
}

async function measure(url: string, query: string): Promise<Figures> {
  let pagination: Pagination = { total: 0 };
  const warmStart = performance.now();
  for (let i = 0; i < 3; i += 1) pagination = await get(url);
  const iterations = (performance.now() - warmStart) / 3 > SLOW_MS ? Math.min(ITERATIONS, SLOW_ITERATIONS) : ITERATIONS;
  const times: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const start = performance.now();
    await get(url);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { query, total: pagination.total, totalExact: pagination.totalExact, iterations, p50: nearestRank(times, 50), p99: nearestRank(times, 99) };
}

/** The floor: node:http answering a page-sized list body, through the same client and agent. */
async function measureBaseline(): Promise<Figures> {
  const item = { id: 'evt_01JABCDEFGHJKMNPQRSTVWXYZ0', sourceId: 'src_01JABCDEFGHJKMNPQRSTVWXYZ0', status: 'delivered', headers: {}, payloadSize: 400 };
  const body = JSON.stringify({ data: Array(20).fill(item), pagination: { total: EVENTS, page: 1, pageSize: 20 } });
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await measure(`http://127.0.0.1:${port}/api/events`, 'bare node:http (same client, page-sized body)');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The queries: the list's own, and what the console sends (status alone, time windows, a search with each). */
function queries(sourceIds: string[], endMs: number): string[] {
  const all = everyQuery(sourceIds, endMs);
  return args.queries === 'lists' ? all.filter((query) => !query.includes('search=')) : all;
}

function everyQuery(sourceIds: string[], endMs: number): string[] {
  const filtered = `sourceId=${sourceIds[3]}&status=delivered`;
  const broad = 'search=order.created';
  const rare = (n: number) => `search=${encodeURIComponent(customerEmail(n))}`;
  // Windows in the middle of the stored events, as someone looking back at an incident would pick them.
  const windowEnd = endMs - (EVENTS * STEP_MS) / 2;
  const window = (ms: number) => `from=${new Date(windowEnd - ms).toISOString()}&to=${new Date(windowEnd).toISOString()}`;
  return [
    '?page=1',
    '?page=500',
    `?page=1&${filtered}`,
    `?page=500&${filtered}`,
    '?page=1&status=failed',
    `?page=1&${window(HOUR_MS)}`,
    `?page=1&${window(24 * HOUR_MS)}`,
    `?page=1&from=${new Date(endMs - HOUR_MS).toISOString()}`,
    '?page=1&signatureValid=false',
    `?page=1&${rare(4242)}`,
    `?page=1&${filtered}&${rare(4243)}`,
    `?page=1&${window(24 * HOUR_MS)}&${rare(4244)}`,
    `?page=1&${broad}`,
    `?page=1&status=failed&${broad}`,
    `?page=1&${window(HOUR_MS)}&${broad}`,
    `?page=1&${window(24 * HOUR_MS)}&${broad}`,
  ];
}

/** The bench's sources, made through the API. */
async function createSources(relay: RunningRelay): Promise<string[]> {
  const sourceIds: string[] = [];
  for (let i = 0; i < SOURCES; i += 1) {
    const response = await request(`${relay.url}/api/sources`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Source ${i}`, slug: `source-${i}` }),
    });
    sourceIds.push(((await response.body.json()) as { id: string }).id);
  }
  return sourceIds;
}

/** Seeds a fresh store; on a store an earlier `--keep` run seeded, reads back its sources, size and end instead. */
async function seedOrReuse(relay: RunningRelay, store: StoreKind): Promise<{ sourceIds: string[]; endMs: number }> {
  const sql = relay.store.sql;
  const [stored] = await sql.all<{ n: number | string; newest: number | string | null }>('SELECT COUNT(*) AS n, MAX(created_at) AS newest FROM events');
  if (Number(stored?.n ?? 0) > 0) {
    EVENTS = Number(stored!.n);
    console.log(`[${store}] reusing ${EVENTS.toLocaleString('en')} stored events`);
    if (args.queries !== 'lists') await indexAllPending(sql);
    // In the order they were made (source-0, source-1, ...): the queries pick sources by position.
    const sources = await sql.all<{ id: string; slug: string }>('SELECT id, slug FROM sources');
    sources.sort((a, b) => Number(a.slug.split('-')[1]) - Number(b.slug.split('-')[1]));
    return { sourceIds: sources.map((source) => source.id), endMs: Number(stored!.newest) + STEP_MS };
  }
  const sourceIds = await createSources(relay);
  const loadStart = performance.now();
  const endMs = Date.now();
  await seedEvents(sql, {
    orgId: relay.bootstrap.org.id,
    sourceIds,
    count: EVENTS,
    startMs: endMs - EVENTS * STEP_MS,
    stepMs: STEP_MS,
    progress: (done) => process.stdout.write(`\r[${store}] inserted ${done.toLocaleString('en')} / ${EVENTS.toLocaleString('en')} events`),
  });
  // The router's search indexer keeps up with live ingest; a bulk seed is indexed here before measuring.
  if (args.queries !== 'lists') await indexAllPending(sql);
  // What autovacuum (PostgreSQL) and `PRAGMA optimize` (SQLite) keep up to date on a running system.
  await sql.run(store === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE');
  console.log(`\n[${store}] loaded in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);
  return { sourceIds, endMs };
}

async function benchStore(relay: RunningRelay, store: StoreKind): Promise<void> {
  const { sourceIds, endMs } = await seedOrReuse(relay, store);
  const figures = [baseline];
  for (const query of queries(sourceIds, endMs)) figures.push(await measure(`${relay.url}/api/events${query}`, query));
  console.log(`[${store}] ${EVENTS.toLocaleString('en')} events, pageSize 20, requests one at a time (measured under whatever load the machine has)`);
  console.table(
    figures.map((f) => ({
      query: f.query.replace(/src_\w+/, 'src_…').replace(/T(\d\d:\d\d):\d\d\.\d+Z/g, 'T$1Z'),
      total: f.total,
      exact: f.totalExact ?? '-',
      n: f.iterations,
      'p50 ms': f.p50.toFixed(1),
      'p99 ms': f.p99.toFixed(1),
    })),
  );
}

const baseline = await measureBaseline();
await forEachStoreRelay(
  args.stores,
  {
    RELAY_ROLE: 'api',
    RELAY_API_KEY: API_KEY,
    RELAY_ORG: 'bench',
    RELAY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    // Ten million events a second apart reach 115 days back: retention would delete and expire them mid-run.
    RELAY_EVENT_RETENTION_DAYS: '3650',
    RELAY_PAYLOAD_RETENTION_DAYS: '3650',
    // It times the API's requests back to back with one key, past one key's rate limit.
    RELAY_API_REQUESTS_PER_SECOND: '1000000',
  },
  benchStore,
  { keep: args.keep, sqliteDataDir: args['sqlite-data-dir'], postgresUrl: args['postgres-url'] },
);
await agent.close();
