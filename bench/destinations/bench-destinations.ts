/**
 * Many destinations on Kafka: how long each new destination waits for its first delivery, what a start
 * costs with all of them, and the rebalances they bring.
 *
 *   node --import tsx bench/destinations/bench-destinations.ts [--destinations 1000] [--sources 10] [--sqlite]
 *        [--kafka-own N] [--env NAME=VALUE ...]
 *
 * The relay runs what `npm start` runs (`dist/`, built first), all roles in one process, on librdkafka's
 * mock cluster (`kcat`, 3 brokers, `KAFKA_MAX_WAIT_MS=100` as in the tests) and a fresh PostgreSQL
 * database (`--sqlite`: the embedded store). `--kafka-own N` runs it on an Apache Kafka cluster of N
 * brokers started for the run instead (in a temp dir, stopped after), with the default fetch wait. `--destinations` destinations are routed from `--sources`
 * sources, each route with the filter `{body: {d: <n>}}`, so webhook `{d: n}` goes to destination n only.
 *
 * 1. Creation: per destination, create it and its route through the API, then post its webhook at once;
 *    the first delivery is timed from the creation's answer (the webhook follows within milliseconds).
 * 2. Steady state: with every destination made, one webhook per destination again, timed from its ingest.
 *    Every job goes through the lanes (docs/decisions/0008-kafka-lanes-and-parking.md), new destination or not.
 * 3. Restart: SIGTERM, start again on the same log and store; the time until it listens, until the
 *    consumer groups have joined, and one webhook per destination timed from its ingest.
 * Each phase prints the relay's RSS, its CPU use while idle (10 s with no webhook: the fetch loops), and the consumer group joins (`relay_consumer_group_join_seconds`):
 * how many, and their mean duration, per group. A bare `node:http` line is not needed here: nothing is
 * compared with a throughput; the timings are the relay's own waits (rebalances, fetch waits).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startRelayProcess, tempDataDir, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { apiClient } from '../../testing/api-client.js';
import { startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { startKafkaMock } from '../../libs/testing/kafka-mock.js';
import { startKafkaCluster } from '../../libs/testing/kafka-cluster.js';
import { createTestDatabase } from '../../libs/testing/postgres.js';
import { processUsage } from '../soak/process-usage.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const API_KEY = 'bench-destinations-key-0123456789';
const ENCRYPTION_KEY = Buffer.alloc(32, 5).toString('base64');
const DELIVERY_TIMEOUT_MS = 300_000;
const IDLE_SAMPLE_MS = 10_000;

const { values: args } = parseArgs({
  options: {
    destinations: { type: 'string', default: '1000' },
    sources: { type: 'string', default: '10' },
    sqlite: { type: 'boolean', default: false },
    'kafka-own': { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const ownBrokers = args['kafka-own'] === undefined ? undefined : Number(args['kafka-own']);
const destinationCount = Number(args.destinations);
const sourceCount = Number(args.sources);
const extraEnv = Object.fromEntries(args.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `p50 ${nearestRank(sorted, 50)} ms, p95 ${nearestRank(sorted, 95)} ms, p99 ${nearestRank(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
};

/** Per group: how many joins and their total seconds, read from the exposition. */
async function groupJoins(relay: RelayProcess): Promise<Map<string, { count: number; sum: number }>> {
  const joins = new Map<string, { count: number; sum: number }>();
  for (const line of (await relay.metrics()).split('\n')) {
    const match = /^relay_consumer_group_join_seconds_(count|sum)\{group="([^"]+)"\} (\S+)$/.exec(line);
    if (!match) continue;
    const entry = joins.get(match[2]!) ?? { count: 0, sum: 0 };
    entry[match[1] as 'count' | 'sum'] = Number(match[3]);
    joins.set(match[2]!, entry);
  }
  return joins;
}

async function describeJoins(relay: RelayProcess, before = new Map<string, { count: number; sum: number }>()): Promise<string> {
  const parts: string[] = [];
  for (const [group, { count, sum }] of await groupJoins(relay)) {
    const earlier = before.get(group) ?? { count: 0, sum: 0 };
    if (count === earlier.count) continue;
    parts.push(`${group} ${count - earlier.count} x mean ${seconds(((sum - earlier.sum) * 1000) / (count - earlier.count))}`);
  }
  return parts.join('; ') || 'none';
}

/** The relay's CPU use over 10 s with no webhook coming in: the cost of its consumers' fetch loops. */
async function idleCpu(relay: RelayProcess): Promise<string> {
  const before = processUsage([relay.pid]).cpuMs;
  await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
  return `${((100 * (processUsage([relay.pid]).cpuMs - before)) / IDLE_SAMPLE_MS).toFixed(0)}% of a core`;
}

/**
 * The mock with the tests' fetch wait (it holds each fetch for all of it), or a real cluster of the run's
 * own with the default wait (a real broker answers a fetch once records arrive).
 */
async function startKafka(): Promise<{ shape: string; env: Record<string, string>; stop(): Promise<void> }> {
  if (ownBrokers === undefined) {
    const mock = await startKafkaMock();
    return { shape: 'Kafka mock cluster', env: { KAFKA_BROKERS: mock.brokers.join(','), KAFKA_MAX_WAIT_MS: '100' }, stop: () => mock.stop() };
  }
  const cluster = await startKafkaCluster({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'bench-destinations-kafka-')), brokerCount: ownBrokers });
  return { shape: `Apache Kafka ${cluster.version} (${ownBrokers} broker(s) of the run's own)`, env: { KAFKA_BROKERS: cluster.brokers.join(',') }, stop: () => cluster.stop() };
}

/** Resolves with when the first request for each path arrived (ms since the epoch). */
async function firstArrivals(sink: HttpSink, paths: string[], since: number): Promise<Map<string, number>> {
  const wanted = new Set(paths);
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  for (;;) {
    const arrivals = new Map<string, number>();
    for (const request of sink.requests) {
      if (request.receivedAt >= since && wanted.has(request.url) && !arrivals.has(request.url)) arrivals.set(request.url, request.receivedAt);
    }
    if (arrivals.size === wanted.size || Date.now() > deadline) return arrivals;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
const cleanups: (() => Promise<void>)[] = [];
const dataDir = tempDataDir();
cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
const sink = await startHttpSink();
cleanups.push(() => sink.close());
let relay: RelayProcess | undefined;
try {
  const kafka = await startKafka();
  cleanups.push(() => kafka.stop());
  console.log(
    `destinations bench: ${destinationCount} destinations from ${sourceCount} sources, all roles in one process, ${kafka.shape} + ${args.sqlite ? 'SQLite' : 'PostgreSQL'}; ${os.cpus().length} cores; ${new Date().toISOString()}`,
  );
  const env: Record<string, string> = {
    RELAY_DATA_DIR: dataDir,
    RELAY_API_KEY: API_KEY,
    RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
    RELAY_DEFAULT_PLAN: 'enterprise',
    ...kafka.env,
    // It times creating the destinations and routes as fast as the API takes them, past one key's rate limit.
    RELAY_API_REQUESTS_PER_SECOND: '1000000',
    ...extraEnv,
  };
  if (!args.sqlite) {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    env.DATABASE_URL = database.url;
  }
  const start = async () => {
    const startedAt = Date.now();
    const member = await startRelayProcess('all', env, { compiled: true, startTimeoutMs: DELIVERY_TIMEOUT_MS });
    return { member, listeningMs: Date.now() - startedAt };
  };
  const first = await start();
  relay = first.member;
  console.log(`start, no destinations: listening after ${seconds(first.listeningMs)}; RSS ${mb(processUsage([relay.pid]).rssBytes)}; idle CPU ${await idleCpu(relay)}`);

  const api = apiClient(relay.url, API_KEY);
  const created = async (resource: string, body: object) => {
    const response = await api('POST', resource, { body });
    if (response.status !== 201) throw new Error(`POST ${resource} answered ${response.status}: ${response.text}`);
    return response.body;
  };
  const sources: { id: string; ingestPath: string }[] = [];
  for (let n = 0; n < sourceCount; n += 1) {
    const source = await created('/api/sources', { name: `Source ${n}`, slug: `source-${n}`, provider: 'generic' });
    sources.push({ id: source.id, ingestPath: new URL(source.webhookUrl).pathname });
  }
  // The phase makes each body new: the same body again would be answered as a duplicate.
  const post = async (n: number, phase: number) => {
    const response = await fetch(`${relay!.url}${sources[n % sourceCount]!.ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ d: n, phase }) });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
  };
  const paths = Array.from({ length: destinationCount }, (_, n) => `/d/${n}`);

  // 1. Creation, each destination's first webhook right after it.
  const createdAt = new Map<string, number>();
  const creationStartedAt = Date.now();
  for (let n = 0; n < destinationCount; n += 1) {
    const destination = await created('/api/destinations', { name: `Destination ${n}`, url: `${sink.url}/d/${n}` });
    await created('/api/routes', { sourceId: sources[n % sourceCount]!.id, destinationId: destination.id, filter: { body: { d: n } } });
    createdAt.set(paths[n]!, Date.now());
    await post(n, 1);
  }
  const lastCreatedAt = Date.now();
  const creationArrivals = await firstArrivals(sink, paths, creationStartedAt);
  const creationWaits = [...creationArrivals].map(([url, at]) => at - createdAt.get(url)!);
  console.log(
    `1. ${destinationCount} destinations and routes created in ${seconds(lastCreatedAt - creationStartedAt)} (${((destinationCount * 1000) / (lastCreatedAt - creationStartedAt)).toFixed(0)}/s), ` +
      `each webhook posted at once: first delivery after creation ${spread(creationWaits)}; ${destinationCount - creationArrivals.size} not delivered within ${seconds(DELIVERY_TIMEOUT_MS)}; ` +
      `RSS ${mb(processUsage([relay.pid]).rssBytes)}; group joins ${await describeJoins(relay)}`,
  );

  // 2. Steady state.
  const joinsBefore = await groupJoins(relay);
  const steadyFrom = Date.now();
  for (let n = 0; n < destinationCount; n += 1) await post(n, 2);
  const steadyArrivals = await firstArrivals(sink, paths, steadyFrom);
  console.log(
    `2. steady state: ${destinationCount} webhooks (one per destination) posted in ${seconds(Date.now() - steadyFrom)}, all delivered ${steadyArrivals.size === destinationCount ? `${seconds(Math.max(...steadyArrivals.values()) - steadyFrom)} after the first post` : `NOT: ${destinationCount - steadyArrivals.size} missing`}; ` +
      `RSS ${mb(processUsage([relay.pid]).rssBytes)}; group joins since phase 1 ${await describeJoins(relay, joinsBefore)}; idle CPU ${await idleCpu(relay)}`,
  );

  // 3. Restart with every destination.
  await relay.terminate();
  relay = undefined;
  const second = await start();
  relay = second.member;
  const restartedFrom = Date.now();
  for (let n = 0; n < destinationCount; n += 1) await post(n, 3);
  const restartArrivals = await firstArrivals(sink, paths, restartedFrom);
  console.log(
    `3. restart with ${destinationCount} destinations: listening after ${seconds(second.listeningMs)}; one webhook per destination, all delivered ` +
      `${restartArrivals.size === destinationCount ? `${seconds(Math.max(...restartArrivals.values()) - restartedFrom)} after the first post` : `NOT: ${destinationCount - restartArrivals.size} missing`}; ` +
      `RSS ${mb(processUsage([relay.pid]).rssBytes)}; group joins ${await describeJoins(relay)}`,
  );
} finally {
  await relay?.terminate();
  for (const cleanup of cleanups.reverse()) await cleanup();
}
