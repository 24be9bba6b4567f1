/**
 * Replay by query over 100,000 matching events: how long `POST /api/replays` takes to answer (dry run,
 * and the job; target: within 1 s), how long its runner then takes to copy the snapshot of ids and how
 * slowly the API answered meanwhile, how long a plain event page takes on the
 * same store, and the process's heap while the job runs (bounded: one step of ids at a time). The
 * baseline is a bare node:http round trip from the same run. The job is routed to a bare node:http sink
 * and cancelled after `--run-seconds`.
 *
 *   node --import tsx bench/replays/bench-replay-query.ts [--events 100000] [--stores sqlite,postgres] [--rate 2000] [--run-seconds 5]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { RunningRelay } from '../../apps/relay/relay.js';
import { forEachStoreRelay, type StoreKind } from '../each-store.js';
import { seedEvents } from '../api/seed-events.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    rate: { type: 'string', default: '2000' },
    'run-seconds': { type: 'string', default: '5' },
  },
});
const EVENTS = Number(args.events);
const API_KEY = 'bench-replay-key-0123456789';
const agent = new Agent({ connections: 1 });
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

async function timed(url: string, init: { method?: string; body?: unknown } = {}): Promise<{ ms: number; status: number; body: any }> {
  const startedAt = performance.now();
  const response = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    dispatcher: agent,
  });
  const body = await response.body.json();
  return { ms: performance.now() - startedAt, status: response.statusCode, body };
}

async function benchStore(relay: RunningRelay, store: StoreKind): Promise<void> {
  const source = (await timed(`${relay.url}/api/sources`, { method: 'POST', body: { name: 'Bench', slug: 'bench' } })).body;
  const destination = (await timed(`${relay.url}/api/destinations`, { method: 'POST', body: { name: 'Sink', url: sinkUrl } })).body;
  await timed(`${relay.url}/api/routes`, { method: 'POST', body: { sourceId: source.id, destinationId: destination.id } });
  await seedEvents(relay.store.sql, { orgId: relay.bootstrap.org.id, sourceIds: [source.id], count: EVENTS, startMs: Date.now() - EVENTS * 1000, stepMs: 1000 });
  await relay.store.sql.run(store === 'postgres' ? 'VACUUM ANALYZE events' : 'ANALYZE');
  const bare: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const startedAt = performance.now();
    await (await request(sinkUrl, { dispatcher: agent })).body.text();
    bare.push(performance.now() - startedAt);
  }
  const page = await timed(`${relay.url}/api/events?sourceId=${source.id}`);
  const dryRun = await timed(`${relay.url}/api/replays`, { method: 'POST', body: { filter: { sourceId: source.id }, dryRun: true } });
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const created = await timed(`${relay.url}/api/replays`, { method: 'POST', body: { filter: { sourceId: source.id }, maxPerSecond: Number(args.rate) } });
  if (created.status !== 202) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  // The runner copies the job's ids a chunk at a time; meanwhile the API must go on answering.
  const copyStartedAt = performance.now();
  let slowestRead = 0;
  for (;;) {
    const [job] = await relay.store.sql.all<{ untilId: string | null }>('SELECT snapshot_until_id AS "untilId" FROM replays WHERE id = ?', [created.body.id]);
    if (job?.untilId === null) break;
    slowestRead = Math.max(slowestRead, (await timed(`${relay.url}/api/replays/${created.body.id}`)).ms);
  }
  const copyMs = performance.now() - copyStartedAt;
  let heapPeak = process.memoryUsage().heapUsed;
  const until = Date.now() + Number(args['run-seconds']) * 1000;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }
  const progress = (await timed(`${relay.url}/api/replays/${created.body.id}/cancel`, { method: 'POST' })).body;
  console.log(`[${store}] ${EVENTS.toLocaleString('en')} matching events`);
  console.log(`  bare node:http round trip (baseline)    ${(bare.reduce((a, b) => a + b, 0) / bare.length).toFixed(1)} ms`);
  console.log(`  GET /api/events?sourceId (page, total)   ${page.ms.toFixed(0)} ms`);
  console.log(`  POST /api/replays dryRun                 ${dryRun.ms.toFixed(0)} ms (matched ${dryRun.body.matched})`);
  console.log(`  POST /api/replays (job)                  ${created.ms.toFixed(0)} ms (matched ${created.body.matched}); target <= 1000 ms: ${created.ms <= 1000 ? 'met' : 'NOT met'}`);
  console.log(`  snapshot of ids copied after the answer  ${copyMs.toFixed(0)} ms; slowest GET /api/replays/:id meanwhile ${slowestRead.toFixed(0)} ms`);
  console.log(`  job at ${args.rate}/s for ${args['run-seconds']} s: replayed ${progress.replayed}, heap ${megabytes(heapBefore)} before, ${megabytes(heapPeak)} peak`);
}

await forEachStoreRelay(args.stores, { RELAY_API_KEY: API_KEY, RELAY_ORG: 'bench', RELAY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') }, benchStore);
await agent.close();
sink.close();
