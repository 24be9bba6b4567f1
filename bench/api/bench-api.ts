/**
 * Event list figures over a large store: GET /api/events page 1 and page 500, unfiltered, with sourceId and
 * status filters, with search, on SQLite and PostgreSQL. Target: p99 < 50 ms for filtered pages.
 * Events are bulk-inserted with multi-row INSERTs, then every query runs through the real HTTP API.
 *
 * Run: node --import tsx bench/api/bench-api.ts [--events 1000000] [--stores sqlite,postgres] [--iterations 200]
 * PostgreSQL: a fresh database on TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { startRelay, type RunningRelay } from '../../apps/relay/relay.js';
import { loadConfig } from '../../libs/config/config.js';
import { createLogger } from '../../libs/logging/logger.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { createTestDatabase, postgresUnavailableReason } from '../../libs/testing/postgres.js';
import { customerEmail, seedEvents } from './seed-events.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    iterations: { type: 'string', default: '200' },
  },
});
const EVENTS = Number(args.events);
const ITERATIONS = Number(args.iterations);
const SOURCES = 20;
const API_KEY = 'bench-api-key-0123456789';
const agent = new Agent({ connections: 1 });

interface Figures {
  query: string;
  total: number;
  p50: number;
  p99: number;
}

async function get(relay: RunningRelay, query: string): Promise<{ total: number }> {
  const response = await request(`${relay.url}/api/events${query}`, { headers: { authorization: `Bearer ${API_KEY}` }, dispatcher: agent });
  const body = (await response.body.json()) as { pagination: { total: number } };
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${JSON.stringify(body)}`);
  return { total: body.pagination.total };
}

async function measure(relay: RunningRelay, query: string, iterations: number): Promise<Figures> {
  let total = 0;
  for (let i = 0; i < 3; i += 1) total = (await get(relay, query)).total;
  const times: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const start = performance.now();
    await get(relay, query);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { query, total, p50: nearestRank(times, 50), p99: nearestRank(times, 99) };
}

async function benchStore(store: 'sqlite' | 'postgres'): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-bench-api-'));
  const database = store === 'postgres' ? await createTestDatabase() : undefined;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    RELAY_ROLE: 'api',
    RELAY_DATA_DIR: dataDir,
    DATABASE_URL: database?.url,
    RELAY_API_KEY: API_KEY,
    RELAY_ORG: 'bench',
    RELAY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  });
  const relay = await startRelay(config, { logger: createLogger({ level: 'silent' }) });
  try {
    const sourceIds: string[] = [];
    for (let i = 0; i < SOURCES; i += 1) {
      const response = await request(`${relay.url}/api/sources`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Source ${i}`, slug: `source-${i}` }),
      });
      sourceIds.push(((await response.body.json()) as { id: string }).id);
    }
    const loadStart = performance.now();
    const stepMs = 1000;
    await seedEvents(relay.store.sql, {
      orgId: relay.bootstrap.org.id,
      sourceIds,
      count: EVENTS,
      startMs: Date.now() - EVENTS * stepMs,
      stepMs,
      progress: (done) => process.stdout.write(`\r[${store}] inserted ${done.toLocaleString('en')} / ${EVENTS.toLocaleString('en')} events`),
    });
    // What autovacuum (PostgreSQL) and `PRAGMA optimize` (SQLite) keep up to date on a running system.
    await relay.store.sql.run(store === 'postgres' ? 'VACUUM ANALYZE events' : 'ANALYZE');
    console.log(`\n[${store}] loaded in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);
    const filtered = `sourceId=${sourceIds[3]}&status=delivered`;
    const queries = [
      '?page=1',
      '?page=500',
      `?page=1&${filtered}`,
      `?page=500&${filtered}`,
      `?page=1&search=${encodeURIComponent(customerEmail(4242))}`,
      `?page=1&${filtered}&search=${encodeURIComponent(customerEmail(4243))}`,
      '?page=1&signatureValid=false',
      `?page=1&from=${new Date(Date.now() - 3600_000).toISOString()}`,
    ];
    const figures: Figures[] = [];
    for (const query of queries) figures.push(await measure(relay, query, ITERATIONS));
    // A term in every payload: the page is found at once, but the total means checking every match.
    figures.push(await measure(relay, '?page=1&search=order.created', Math.min(ITERATIONS, 20)));
    console.log(`[${store}] ${EVENTS.toLocaleString('en')} events, ${ITERATIONS} requests per query (20 for the last), pageSize 20`);
    console.table(figures.map((f) => ({ query: f.query.replace(/src_\w+/, 'src_…'), total: f.total, 'p50 ms': f.p50.toFixed(1), 'p99 ms': f.p99.toFixed(1) })));
  } finally {
    await relay.close();
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const store of args.stores.split(',') as ('sqlite' | 'postgres')[]) {
  if (store === 'postgres') {
    const reason = await postgresUnavailableReason();
    if (reason) {
      console.log(`[postgres] skipped: ${reason}`);
      continue;
    }
  }
  await benchStore(store);
}
await agent.close();
