/**
 * The router's CPU per stored event with payload search indexed inside its insert (as before migration
 * 0012) and behind it (the search indexer), and the indexer's own cost per event. The router's own code
 * (`routeEvents`) stores batches of 1 KB JSON events of one source with no routes, as the router consumer
 * hands them; "no search" (the index's insert work removed altogether) is the floor of the same run.
 *
 * CPU is this process's (process.cpuUsage) plus, on PostgreSQL, the whole local server's (/proc, so the
 * server must run on this machine, and nothing else should use it meanwhile): the trigram work happens there.
 *
 * Run: node --import tsx bench/search-index/bench-search-index.ts [--events 20000] [--batch 200] [--stores sqlite,postgres]
 * PostgreSQL: a fresh database on TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
 */
import { createRelayTracer } from '../../libs/tracing/relay-tracer.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { routeEvents } from '../../apps/router/route-events.js';
import type { BrokerRecord } from '../../libs/broker/broker.js';
import { payloadHash } from '../../libs/dedup/payload-hash.js';
import { newId } from '../../libs/ids/ids.js';
import { encodeIngestMessage, type IngestMeta } from '../../libs/pipeline/ingest-message.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { indexAllPending } from '../../libs/store/search-index.js';
import type { SqlClient } from '../../libs/store/sql-client.js';
import { sourceRow } from '../../libs/testing/store-fixtures.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { createTestDatabase } from '../../libs/testing/postgres.js';
import { postgresServerCpuMs } from '../soak/process-usage.js';
import { INGEST_TOPIC } from '../../libs/pipeline/topology.js';
import { uniqueWebhookBody } from '../signed-webhook.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '200' },
    stores: { type: 'string', default: 'sqlite,postgres' },
  },
});
const EVENTS = Number(args.events);
const BATCH = Number(args.batch);

type Variant = 'in the insert (before)' | 'behind the insert (after)' | 'no search (floor)';

/** Puts the store's search where the variant has it; the migrated store is "behind the insert". */
async function arrange(sql: SqlClient, variant: Variant): Promise<void> {
  if (variant === 'behind the insert (after)') return;
  if (sql.kind === 'postgres') {
    await sql.run('DROP TRIGGER events_search_pending ON events');
    // Migration 0004's index, maintained by every insert.
    if (variant === 'in the insert (before)') await sql.run('CREATE INDEX ix_events_payload_trgm ON events USING gin (payload_text gin_trgm_ops)');
    return;
  }
  // Migration 0004's trigger: every insert indexes its payload text.
  if (variant === 'in the insert (before)') {
    await sql.run(`CREATE TRIGGER events_search_insert AFTER INSERT ON events WHEN new.payload_text IS NOT NULL BEGIN
      INSERT INTO events_search (rowid, payload_text) VALUES (new.rowid, new.payload_text);
    END`);
  }
}

/** The other benches' 1 KB pull request webhook, unique per event (its text is what the index costs). */
const body = () => Buffer.from(uniqueWebhookBody().body);

function record(orgId: string, sourceId: string, n: number): BrokerRecord {
  const payload = body();
  const now = Date.now();
  const meta: IngestMeta = {
    eventId: newId('evt'),
    orgId,
    sourceId,
    headers: { 'content-type': 'application/json' },
    contentType: 'application/json',
    clientIp: '203.0.113.7',
    payloadHash: payloadHash(payload),
    payloadSize: payload.length,
    signatureValid: true,
    receivedAt: now,
    validatedAt: now,
    queuedAt: now,
  };
  const message = encodeIngestMessage(meta, payload);
  return { topic: INGEST_TOPIC, partition: 0, offset: String(n), timestamp: now, key: message.key, value: message.value, headers: message.headers ?? {} };
}

/**
 * CPU ms of this process and, on PostgreSQL, of the whole local server: the store's statements may run on
 * any connection of its pool (a transaction takes one of its own), so no single backend would do.
 */
function cpuMeter(store: Store): () => { total: number; server: number } {
  const read = () => {
    const own = process.cpuUsage();
    const server = store.sql.kind === 'postgres' ? postgresServerCpuMs() : 0;
    return { total: (own.user + own.system) / 1000 + server, server };
  };
  const start = read();
  return () => {
    const now = read();
    return { total: now.total - start.total, server: now.server - start.server };
  };
}

async function measure(kind: 'sqlite' | 'postgres', variant: Variant): Promise<void> {
  const database = kind === 'postgres' ? await createTestDatabase() : undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-search-bench-'));
  const store = await openStore({ dataDir, databaseUrl: database?.url });
  try {
    const org = await store.organizations.create('bench', 'business');
    const source = await store.sources.insert(sourceRow(org.id));
    await arrange(store.sql, variant);
    const deps = {
      sql: store.sql,
      routesFor: async () => [],
      publish: async () => undefined,
      now: Date.now,
      secrets: createSecretBox(Buffer.alloc(32, 7)),
      deadLetters: async () => undefined,
      tracer: createRelayTracer({ serviceName: 'bench-search-index', sampleRatio: 1 }),
    };
    const batches = Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, b) =>
      Array.from({ length: Math.min(BATCH, EVENTS - b * BATCH) }, (_, i) => record(org.id, source.id, b * BATCH + i)),
    );
    const routerCpu = cpuMeter(store);
    const started = performance.now();
    for (const records of batches) await routeEvents(deps, { topic: INGEST_TOPIC, partition: 0, records });
    const routerMs = performance.now() - started;
    const routerCpuMs = routerCpu().total;
    let indexer = '';
    if (variant === 'behind the insert (after)') {
      const indexerCpu = cpuMeter(store);
      const indexStarted = performance.now();
      const indexed = await indexAllPending(store.sql);
      const cpu = indexerCpu();
      const serverPart = kind === 'postgres' ? ` (server ${((cpu.server * 1000) / indexed).toFixed(0)})` : '';
      indexer = `; indexer ${((cpu.total * 1000) / indexed).toFixed(0)} µs CPU/event${serverPart} (${Math.round(indexed / ((performance.now() - indexStarted) / 1000))} events/s)`;
    }
    const perEvent = (ms: number) => ((ms * 1000) / EVENTS).toFixed(0);
    console.log(
      `[${kind}] search ${variant.padEnd(25)} router ${perEvent(routerCpuMs).padStart(4)} µs CPU/event, ${perEvent(routerMs).padStart(4)} µs wall/event` +
        ` (${Math.round(EVENTS / (routerMs / 1000))} events/s)${indexer}`,
    );
  } finally {
    await store.close();
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`${EVENTS} events of 1 KB in batches of ${BATCH}, one source, no routes`);
for (const kind of args.stores.split(',') as ('sqlite' | 'postgres')[]) {
  for (const variant of ['no search (floor)', 'in the insert (before)', 'behind the insert (after)'] as const) await measure(kind, variant);
}
