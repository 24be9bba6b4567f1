/**
 * Open-loop soak of a whole relay: can it keep up with a source sending at a plan's rate?
 *
 *   node --import tsx bench/soak/bench-soak.ts [--rates 1000,2000,3000,4000,6000,8000,10000,12000] [--seconds 20] [--sources 1]
 *        [--postgres] [--kafka | --kafka-own N] [--split] [--env NAME=VALUE ...] [--node-option OPTION ...] [--cpu-prof] [--all-rates] [--timeline]
 *        [--transformation off,on] [--destination-type rabbitmq|nats|kafka|redis] [--tracing none,sdk,export]
 *
 * The relay runs what `npm start` runs (the bench builds `dist/` first and starts `dist/apps/relay/main.js`
 * with a fresh data directory), all roles in one process; `--split` runs api, gateway, router, deliverer and
 * recorder as processes of their own (needs `--kafka --postgres`). `--postgres` puts the store on a fresh
 * database of the local server (dropped after), `--kafka` the broker on Apache Kafka: the cluster of
 * `npm run kafka:up` in this checkout (or `KAFKA_BROKERS`), with a topic prefix of the run's own (deleted
 * after), else, where none runs, librdkafka's mock cluster (`kcat`); `--kafka-own N` on an Apache Kafka
 * cluster of N brokers started for the run (in a temp dir, stopped after).
 * The sink is a process of its own (bench/relay/sink-process.ts). The generator sends codehost-signed,
 * unique 1 KB bodies (made and signed before each rate's load: webhook-sender.ts) on a fixed schedule,
 * round-robin over `--sources` sources routed to one destination, and times every answer from its scheduled
 * moment (open-loop; see open-loop.ts).
 *
 * First the bare line: the same schedule against node:http that reads the body and answers 200, the
 * generator's own floor on this machine. Then the forward line: node:http that answers and sends each body
 * on to the sink (undici), nothing stored: one request in and one out per event, the floor of any relay here,
 * with how busy the machine's cores were (and how much of them its host took: steal); a rate it carried (every
 * request answered, >= 98% of it forwarded during the load) is one this machine leaves room for today. Then, per offered rate, after the previous rate's backlog drained:
 * ingest p50/p99/max from the schedule, requests not acknowledged, deliveries per second during the load,
 * the backlog when the load ended and how long it took to drain, ingest -> delivery p50/p99 (sink arrival
 * minus the scheduled moment), how far behind the search index was when the deliveries had drained and how long
 * it took to catch up, the relay's peak RSS and its CPU time per event (load, drain and the index's catch-up; with `--split`,
 * each process's too; and who kept the machine's cores busy during the load: the relay, the PostgreSQL server,
 * the Kafka brokers (or the mock cluster), the sink, the generator and the rest; with `--postgres`, the commits and rows its database wrote per event and how much it
 * grew, from the server's statistics of that database; with `--kafka`, its Kafka requests per event by API
 * and by consumer group, bench/soak/kafka-requests.ts), and the event-loop delay (p99, max) of the
 * thread that takes the webhooks during the load and each thread's heap at its end, from its `/metrics`; how many
 * connections waited for the relay's accept and for how long (bench/soak/accept-queue.ts); and,
 * from every process's `/metrics`, how long records waited in the log before each hop (consumer group) and how
 * long its handler took, and how long the destination took to answer each delivery request (bench/soak/hop-waits.ts):
 * where ingest -> delivery latency goes. A rate is
 * sustained when every request was acknowledged, >= 98% of the offered rate was delivered during the load,
 * ingest -> delivery p99 <= 1 s and every acknowledged event arrived. Stepping stops at the first rate not
 * sustained (`--all-rates` goes on). The last line names the highest rate sustained, and the highest the
 * forward line carried in the same run, for scale on a shared machine whose speed varies threefold from day to day. `--timeline` adds,
 * per rate, the slowest ingest answer of each second of the load: where in the run a p99 comes from.
 * `--cpu-prof` profiles every relay thread and prints, per rate, the load's window for profile-stages.ts.
 * `--transformation on` puts a small transformation on every route (SMALL_TRANSFORMATION: a field added, a
 * header dropped); `--transformation off,on` soaks without, then with, each on a fresh relay: what a
 * transformation costs per event, in one run.
 * `--destination-type <type>` routes a second set of sources to a queue destination on this machine's
 * server of that type (a place of the run's own, read by the sink process: bench/relay/queue-reader.ts;
 * Kafka's is the running cluster when the relay's broker is not Kafka, else a one-broker cluster of the
 * run's own) and soaks it after the HTTP destination at every rate, on the same relay: each line's
 * deliveries a second and CPU per event, then one line setting the two side by side.
 * `--tracing none,sdk,export` soaks every rate on a fresh relay per tracing shape, one after the other on the
 * same sink (with `--transformation off,on`, every pairing of the two lists): none is OTEL_SDK_DISABLED=true (no SDK), sdk the default (the SDK, nothing exported), export
 * spans sent to an OTLP/HTTP receiver in the bench's process (OTEL_EXPORTER_OTLP_ENDPOINT; how many arrived
 * is printed). Each variant's CPU per event is then set beside the first's: what tracing costs
 * (docs/performance.md, docs/decisions/0100-otel-sdk-disabled.md).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import type { Role } from '../../libs/config/config.js';
import { DESTINATION_TYPES, type QueueType } from '../../libs/destinations/queue-target.js';
import type { QueueReaderSpec } from '../relay/queue-reader.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { apiClient } from '../../testing/api-client.js';
import { sampleSum } from '../../libs/testing/metric-samples.js';
import { startKafkaMock } from '../../libs/testing/kafka-mock.js';
import { readClusterState, startKafkaCluster } from '../../libs/testing/kafka-cluster.js';
import { onRealKafka, realKafkaBrokers } from '../../libs/testing/kafka-target.js';
import { createTestDatabase } from '../../libs/testing/postgres.js';
import { startRelayProcess, tempDataDir, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { isTrue, waitFor } from '../../libs/testing/wait-for.js';
import { startTarget } from '../ingest/target-client.js';
import { startBenchSink, type BenchSink } from '../relay/sink-client.js';
import { BODY_BYTES } from '../signed-webhook.js';
import { now, runOpenLoop, type Outcome } from './open-loop.js';
import { preparedWebhookSender } from './webhook-sender.js';
import { cpuByParty, machineBusy, machineCpu, postgresServerCpuMs, processUsage, watchPeakRss } from './process-usage.js';
import { storeWritesPerEvent, watchStoreWrites } from './store-writes.js';
import { readKafkaRequestCounts, type KafkaRequestCounts } from './kafka-requests.js';
import { hopHistograms, hopWaitsLine } from './hop-waits.js';
import { watchAcceptQueue } from './accept-queue.js';
import { startOtlpReceiver } from '../../libs/testing/otlp-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const API_KEY = 'bench-soak-key-0123456789';
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
const SECRET = 'bench-soak-codehost-secret';
const BARE_SECONDS = 5;
const DRAIN_TIMEOUT_MS = 180_000;
const SUSTAINED = { deliveredShare: 0.98, e2eP99Ms: 1_000 };
/** What `--transformation` runs on every route: issue 57's small transformation. */
const SMALL_TRANSFORMATION = 'function transform(request) { const { "user-agent": dropped, ...headers } = request.headers; return { ...request, body: { ...request.body, relayed: true }, headers }; }';
const TARGET = { rate: 2_000, ingestP99Ms: 25, e2eP99Ms: 250, rssBytes: 500 * 1024 * 1024 };

const { values: args } = parseArgs({
  options: {
    rates: { type: 'string', default: '1000,2000,3000,4000,6000,8000,10000,12000' },
    seconds: { type: 'string', default: '20' },
    sources: { type: 'string', default: '1' },
    postgres: { type: 'boolean', default: false },
    kafka: { type: 'boolean', default: false },
    'kafka-own': { type: 'string' },
    split: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    'node-option': { type: 'string', multiple: true, default: [] },
    'cpu-prof': { type: 'boolean', default: false },
    'all-rates': { type: 'boolean', default: false },
    timeline: { type: 'boolean', default: false },
    transformation: { type: 'string', default: 'off' },
    'destination-type': { type: 'string', default: 'http' },
    tracing: { type: 'string', default: 'sdk' },
  },
});
const destinationType = args['destination-type'] as (typeof DESTINATION_TYPES)[number];
if (!DESTINATION_TYPES.includes(destinationType)) throw new Error(`--destination-type must be one of ${DESTINATION_TYPES.join(', ')}`);
/** The queue type soaked beside HTTP, if any. */
const queueType: QueueType | undefined = destinationType === 'http' ? undefined : destinationType;
const TRACING_SHAPES = ['none', 'sdk', 'export'] as const;
type TracingShape = (typeof TRACING_SHAPES)[number];
const tracingShapes = args.tracing.split(',') as TracingShape[];
if (!tracingShapes.every((shape) => TRACING_SHAPES.includes(shape))) throw new Error(`--tracing takes a list of ${TRACING_SHAPES.join(', ')}`);
const transformationShapes = args.transformation.split(',');
if (!transformationShapes.every((shape) => shape === 'off' || shape === 'on')) throw new Error('--transformation takes off, on or off,on');
/** The relays a run soaks in turn: every pairing of a tracing shape and a transformation shape. */
interface Variant {
  tracing: TracingShape;
  transformation: boolean;
  /** What its lines are labelled with, when a run has more than one. */
  name: string;
}
const variants: Variant[] = tracingShapes.flatMap((tracing) =>
  transformationShapes.map((transformation) => ({ tracing, transformation: transformation === 'on', name: `tracing ${tracing}, transformation ${transformation}` })),
);
/** Each line names its destination type and variant when a run has more than one of either. */
const labelled = queueType !== undefined || variants.length > 1;
const rates = args.rates.split(',').map(Number);
const seconds = Number(args.seconds);
const sourceCount = Number(args.sources);
const ownBrokers = args['kafka-own'] === undefined ? undefined : Number(args['kafka-own']);
// Every Kafka shape is `args.kafka` from here on; `ownBrokers` says which.
if (ownBrokers !== undefined) args.kafka = true;
if (args.split && !(args.kafka && args.postgres)) throw new Error('--split needs --kafka and --postgres: processes share no embedded log or SQLite file');
const extraEnv = Object.fromEntries(args.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const profileDir = args['cpu-prof'] ? fs.mkdtempSync(path.join(os.tmpdir(), 'soak-profiles-')) : undefined;
/** The machine's monotonic clock in microseconds, which V8's CPU profiles run on: a window printed in it selects their samples. */
const monotonicMicros = () => process.hrtime.bigint() / 1000n;

const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? '-' : `${value.toFixed(1)} ms`);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

interface Deployment {
  processes: RelayProcess[];
  /** Files where each relay process keeps its count of Kafka requests by API (bench/soak/kafka-requests.ts). */
  kafkaRequestFiles: string[];
  apiUrl: string;
  ingestUrl: string;
  /** The store's database, with `--postgres`. */
  databaseUrl?: string;
  /** What the broker runs on, for the shape line: Apache Kafka (and its version) or the mock. */
  kafkaShape?: string;
  /** The broker JVMs (or the kcat process hosting the mock cluster), with `--kafka`; empty where unknown (KAFKA_BROKERS). */
  kafkaPids: number[];
  stop(): Promise<void>;
}

/** The relay as configured by the options, all roles in one process or one process per role. */
async function startDeployment(shapeEnv: Record<string, string>): Promise<Deployment> {
  const cleanups: (() => Promise<void>)[] = [];
  const dataDir = tempDataDir();
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  let kafka: KafkaUnderBench | undefined;
  const env: Record<string, string> = {
    RELAY_DATA_DIR: dataDir,
    RELAY_API_KEY: API_KEY,
    RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
    // Enterprise, its limit above the top rate (issue 56): the plan's rate limit is not what is measured.
    RELAY_DEFAULT_PLAN: 'enterprise',
    RELAY_ENTERPRISE_REQUESTS_PER_SECOND: '100000',
  };
  if (args.postgres) {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    env.DATABASE_URL = database.url;
  }
  if (args.kafka) {
    kafka = await startKafka();
    cleanups.push(kafka.cleanup);
    Object.assign(env, kafka.env);
  }
  Object.assign(env, extraEnv, shapeEnv);
  const processes: RelayProcess[] = [];
  const kafkaRequestFiles: string[] = [];
  const start = async (role: Role) => {
    const execArgv = [...args['node-option'], ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, role)}`] : [])];
    const roleEnv = { ...env };
    if (args.kafka) {
      const file = path.join(dataDir, `kafka-requests-${role}.json`);
      kafkaRequestFiles.push(file);
      roleEnv.BENCH_KAFKA_REQUESTS_FILE = file;
      execArgv.push('--import', path.join(ROOT, 'dist/bench/soak/kafka-requests.js'));
    }
    const member = await startRelayProcess(role, roleEnv, { compiled: true, execArgv });
    processes.push(member);
    return member;
  };
  const stop = async () => {
    // SIGTERM, so a profiled process writes its profile; in reverse, as a stop drains the pipeline.
    for (const member of [...processes].reverse()) await member.terminate();
    for (const cleanup of cleanups.reverse()) await cleanup();
    for (const member of processes) keepLog(member);
  };
  try {
    if (!args.split) {
      const all = await start('all');
      return { processes, kafkaRequestFiles, apiUrl: all.url, ingestUrl: all.url, databaseUrl: env.DATABASE_URL, kafkaShape: kafka?.shape, kafkaPids: kafka?.pids ?? [], stop };
    }
    // The api process first: it applies the migrations the others then find done.
    const api = await start('api');
    const [gateway] = await Promise.all((['gateway', 'router', 'deliverer', 'recorder'] as const).map(start));
    return { processes, kafkaRequestFiles, apiUrl: api.url, ingestUrl: gateway!.url, databaseUrl: env.DATABASE_URL, kafkaShape: kafka?.shape, kafkaPids: kafka?.pids ?? [], stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface KafkaUnderBench {
  shape: string;
  env: Record<string, string>;
  pids: number[];
  cleanup(): Promise<void>;
}

/** The Kafka the options ask for: a cluster of the run's own, the running one (topics under a prefix of the run's own), or the mock. */
async function startKafka(): Promise<KafkaUnderBench> {
  if (ownBrokers !== undefined) {
    const cluster = await startKafkaCluster({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'bench-soak-kafka-')), brokerCount: ownBrokers });
    const env = { KAFKA_BROKERS: cluster.brokers.join(','), KAFKA_SESSION_TIMEOUT_MS: '6000' };
    return { shape: `Apache Kafka ${cluster.version} (${ownBrokers} broker(s) of the run's own)`, env, pids: cluster.nodes.map((node) => node.pid!), cleanup: () => cluster.stop() };
  }
  const brokers = realKafkaBrokers();
  if (brokers) {
    const shared = onRealKafka(brokers);
    const state = readClusterState();
    const pids = state && brokers.join(',') === state.brokers.join(',') ? state.nodes.flatMap((node) => (node.pid === undefined ? [] : [node.pid])) : [];
    return { shape: `Apache Kafka ${state?.version ?? ''} (${brokers.length} broker(s) of npm run kafka:up)`, env: shared.env, pids, cleanup: shared.cleanup };
  }
  const mock = await startKafkaMock();
  return { shape: 'Kafka mock cluster', env: { KAFKA_BROKERS: mock.brokers.join(',') }, pids: [mock.pid], cleanup: () => mock.stop() };
}

/**
 * The cluster a Kafka destination publishes to: never the relay's own brokers (the private-destination
 * policy refuses them), so the running cluster only when the relay's broker is not Kafka, else one
 * broker of the run's own.
 */
async function kafkaForQueueDestination(): Promise<{ brokers: string[]; stop(): Promise<void> }> {
  const running = args.kafka ? undefined : realKafkaBrokers();
  if (running) return { brokers: running, stop: async () => undefined };
  const cluster = await startKafkaCluster({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'bench-soak-destination-kafka-')), brokerCount: 1 });
  console.log(`kafka destination: Apache Kafka ${cluster.version}, one broker of the run's own`);
  return { brokers: cluster.brokers, stop: () => cluster.stop() };
}

/** Writes a relay process's log where it can be read after the run, and says how many warnings and errors it holds. */
function keepLog(member: RelayProcess): void {
  const file = path.join(os.tmpdir(), `bench-soak-${member.role}-${member.pid}.log`);
  const output = member.output();
  fs.writeFileSync(file, output);
  const levels = { warn: 0, error: 0 };
  for (const line of output.split('\n')) {
    const level = /"level":(\d+)/.exec(line)?.[1];
    if (level === '40') levels.warn += 1;
    else if (level !== undefined && Number(level) >= 50) levels.error += 1;
  }
  console.log(`${member.role} log: ${levels.warn} warnings, ${levels.error} errors: ${file}`);
  // librdkafka's mock keeps 5 MB per partition and deletes older records, read or not (rdkafka_mock.c).
  if (output.includes('Offset out of range')) {
    console.log(`${member.role}: the mock cluster deleted records no consumer had read yet (it keeps 5 MB per partition): events "NOT delivered" above are the mock's loss`);
  }
}

/**
 * `sourceCount` codehost sources, each routed to the sink (through SMALL_TRANSFORMATION with
 * `--transformation`), and as many routed to the sink's queue destination when it reads one; answers
 * their ingest paths, by destination type.
 */
async function configure(apiUrl: string, sink: BenchSink, transformation: boolean): Promise<{ http: string[]; queue?: string[] }> {
  const api = apiClient(apiUrl, API_KEY);
  const created = async (resource: string, body: object) => {
    const response = await api('POST', resource, { body });
    if (response.status !== 201) throw new Error(`POST ${resource} answered ${response.status}: ${response.text}`);
    return response.body;
  };
  const transformationId = transformation ? (await created('/api/transformations', { name: 'Soak small', code: SMALL_TRANSFORMATION })).id : undefined;
  /** `sourceCount` sources named `prefix-N`, routed to a destination made of `target`. */
  const routedSources = async (prefix: string, target: object) => {
    const destination = await created('/api/destinations', { name: `Soak ${prefix}`, ...target });
    const paths: string[] = [];
    for (let n = 0; n < sourceCount; n += 1) {
      const source = await created('/api/sources', {
        name: `Soak ${prefix} ${n}`,
        slug: `${prefix}-${n}`,
        provider: 'codehost',
        verificationConfig: { type: 'codehost', secret: SECRET },
      });
      await created('/api/routes', { sourceId: source.id, destinationId: destination.id, transformationId });
      paths.push(new URL(source.webhookUrl).pathname);
    }
    return paths;
  };
  return { http: await routedSources('soak', { url: `${sink.url}/soak` }), ...(sink.queue ? { queue: await routedSources(`soak-${sink.queue.type}`, sink.queue) } : {}) };
}

/** The Kafka requests of every relay process so far, by API. */
function kafkaRequests(deployment: Deployment): KafkaRequestCounts {
  const total: KafkaRequestCounts = {};
  for (const file of deployment.kafkaRequestFiles) {
    for (const [api, count] of Object.entries(readKafkaRequestCounts(file))) total[api] = (total[api] ?? 0) + count;
  }
  return total;
}

/** Requests per event by API between two counts, busiest first; then the consumer groups' fetches and commits. */
function requestsPerEvent(before: KafkaRequestCounts, after: KafkaRequestCounts, events: number): string {
  const rows = Object.entries(after)
    .map(([name, count]) => [name, (count - (before[name] ?? 0)) / Math.max(1, events)] as const)
    .filter(([, perEvent]) => perEvent > 0)
    .sort((a, b) => b[1] - a[1]);
  const list = (entries: (readonly [string, number])[]) => entries.map(([name, perEvent]) => `${name} ${perEvent.toFixed(3)}`).join(', ');
  const apis = rows.filter(([name]) => !name.includes(' '));
  const total = apis.reduce((sum, [, perEvent]) => sum + perEvent, 0);
  return `Kafka requests per event (load and drain): ${total.toFixed(2)} in all; ${list(apis)}; by group: ${list(rows.filter(([name]) => name.includes(' ')))}`;
}

const answerLatencies = (outcomes: Outcome[]) => outcomes.map((outcome) => outcome.answeredAt - outcome.scheduledAt).sort((a, b) => a - b);

/**
 * The generator at every rate against one of two floors, each with how busy the machine's cores were during
 * the load: bare node:http (the generator's own floor on this machine), then, given the sink, node:http that
 * answers and sends each body on to it, nothing stored (one request in and one out per event: what the
 * machine leaves for any relay's own work). Returns the rates the forward line carried: every request
 * answered and >= 98% of the rate forwarded during the load, as a relay's sustained rate asks.
 */
async function floorLine(sink?: BenchSink): Promise<number[]> {
  const carried: number[] = [];
  const target = sink ? await startTarget('forward', [], [`${sink.url}/forward`]) : await startTarget('bare');
  const dispatcher = new Agent({ connections: 1024, keepAliveTimeout: 60_000 });
  const figures: string[] = [];
  for (const rate of rates) {
    const before = (await sink?.counts())?.total ?? 0;
    const send = preparedWebhookSender(target.ready.url, [target.ready.path], SECRET, Math.round(rate * BARE_SECONDS), dispatcher);
    const cpuBefore = machineCpu();
    const outcomes = await runOpenLoop({ rate, seconds: BARE_SECONDS, send });
    const busy = machineBusy(cpuBefore, machineCpu());
    const latencies = answerLatencies(outcomes);
    const failed = outcomes.filter((outcome) => outcome.status !== 200).length;
    const answers = `${rate}/s p50 ${ms(nearestRank(latencies, 50))} p99 ${ms(nearestRank(latencies, 99))}${failed ? ` (${failed} failed)` : ''}`;
    if (!sink) {
      figures.push(`${answers}, ${busy}`);
      continue;
    }
    const forwarded = (await sink.counts()).total - before;
    if (failed === 0 && forwarded >= 0.98 * rate * BARE_SECONDS) carried.push(rate);
    figures.push(`${answers}, forwarded ${(forwarded / BARE_SECONDS).toFixed(0)}/s, ${busy}`);
    // The next rate starts once this one's bodies are all at the sink.
    await waitFor('the forwarded bodies at the sink', async () => (await sink.counts()).total - before >= outcomes.length - failed, isTrue, 30_000, 100);
  }
  await dispatcher.close();
  const report = await target.stop();
  await sink?.reset();
  const name = sink ? 'forward (node:http, each body sent on to the sink, nothing stored)' : 'bare node:http';
  console.log(`${name}, ${BARE_SECONDS} s per rate, answer latency from the schedule: ${figures.join('; ')}; cpu ${report.cpuMicrosPerRequest.toFixed(0)} us/req`);
  return carried;
}

/** The slowest answer (from its scheduled moment) of each second of the load. */
function timeline(outcomes: readonly Outcome[], loadStartedAt: number): string {
  const slowest: number[] = [];
  for (const outcome of outcomes) {
    const second = Math.floor((outcome.scheduledAt - loadStartedAt) / 1000);
    slowest[second] = Math.max(slowest[second] ?? 0, outcome.answeredAt - outcome.scheduledAt);
  }
  return `slowest ingest answer per second: ${slowest.map((latency, second) => `${second}s ${latency.toFixed(0)} ms`).join(', ')}`;
}

interface Step {
  rate: number;
  sustained: boolean;
  /** Deliveries a second during the load, and the relay's CPU per event (microseconds). */
  deliveredRate: number;
  cpuUsPerEvent: number;
  ingestP99: number;
  e2eP99: number;
  peakRss: number;
}

/**
 * What the process that takes the webhooks says of its threads, from one scrape of its `/metrics`: its main
 * thread's event-loop delay since the previous scrape (prom-client resets the delay histogram whenever
 * `/metrics` is collected; where ingest waits for its thread rather than for anything it awaits), and each
 * thread's heap now (`relay_thread_heap_used_bytes`).
 */
async function gatewayThreads(deployment: Deployment): Promise<{ loopDelay: string; heaps: string }> {
  const gateway = deployment.processes.find((member) => member.role === 'all' || member.role === 'gateway')!;
  const exposition = await gateway.metrics();
  const seconds = (stat: string) => Number(new RegExp(`^relay_nodejs_eventloop_lag_${stat}_seconds(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(exposition)?.[1]);
  const heaps = [...exposition.matchAll(/^relay_thread_heap_used_bytes\{thread="([^"]+)"\} (\S+)$/gm)];
  return {
    loopDelay: `p99 ${ms(seconds('p99') * 1000)} max ${ms(seconds('max') * 1000)}`,
    heaps: heaps.map(([, thread, bytes]) => `${thread} ${mb(Number(bytes))}`).join(', '),
  };
}

/** Events the search index does not hold yet, as the relay's processes publish it (each indexing pass, twice a second). */
async function searchIndexLag(deployment: Deployment): Promise<number> {
  const expositions = await Promise.all(deployment.processes.map((member) => member.metrics()));
  return Math.max(0, ...expositions.map((text) => sampleSum(text, 'relay_search_index_lag_events')));
}

/**
 * Who uses the machine's cores: the relay, the PostgreSQL server (with `--postgres`; the local server
 * serves nothing else during the run), the Kafka brokers or mock cluster (with `--kafka`), the sink, and this process (the
 * generator, and the bench's own reads); the rest is `other`.
 */
function cpuShares(deployment: Deployment, sink: BenchSink) {
  const pids = deployment.processes.map((member) => member.pid);
  return cpuByParty({
    relay: () => processUsage(pids).cpuMs,
    ...(deployment.databaseUrl ? { postgres: postgresServerCpuMs } : {}),
    ...(deployment.kafkaPids.length > 0 ? { kafka: () => processUsage(deployment.kafkaPids).cpuMs } : {}),
    sink: () => processUsage([sink.pid]).cpuMs,
    generator: () => {
      const own = process.cpuUsage();
      return (own.user + own.system) / 1000;
    },
  });
}

/** One rate's load on the sources of `paths`, whose destination is of type `label`. */
async function soakAt(rate: number, deployment: Deployment, paths: string[], sink: BenchSink, label: string): Promise<Step> {
  const pids = deployment.processes.map((member) => member.pid);
  const dispatcher = new Agent({ connections: 1024, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const send = preparedWebhookSender(deployment.ingestUrl, paths, SECRET, Math.round(rate * seconds), dispatcher);
  const deliveredBefore = (await sink.counts()).total;
  const storeWrites = deployment.databaseUrl ? await watchStoreWrites(deployment.databaseUrl) : undefined;
  const writesBefore = await storeWrites?.settled();
  const machineShares = cpuShares(deployment, sink);
  const usageBefore = processUsage(pids);
  const roleUsageBefore = pids.map((pid) => processUsage([pid]).cpuMs);
  const requestsBefore = kafkaRequests(deployment);
  const rss = watchPeakRss(pids);
  const scrapeHops = async () => hopHistograms(await Promise.all(deployment.processes.map((member) => member.metrics())));
  const hopsBefore = await scrapeHops();
  // Resets the delay histogram, so the next scrape covers the load alone.
  await gatewayThreads(deployment);
  const sharesBefore = machineShares.read();
  const acceptQueue = watchAcceptQueue(Number(new URL(deployment.ingestUrl).port));
  const loadStartedAt = now();
  const loadStartedMicros = monotonicMicros();
  const outcomes = await runOpenLoop({ rate, seconds, send });
  const accepts = acceptQueue.stop();
  const loadEndedAt = now();
  const loadEndedMicros = monotonicMicros();
  const sharesAfter = machineShares.read();
  const machine = machineBusy(sharesBefore.machine, sharesAfter.machine);
  const { loopDelay, heaps } = await gatewayThreads(deployment);
  if (args.timeline) console.log(`      ${timeline(outcomes, loadStartedAt)}`);
  // The load ends with its last scheduled request; answers may still be on their way then.
  const deliveredDuringLoad = (await sink.counts()).total - deliveredBefore;
  const acknowledged = outcomes.filter((outcome) => outcome.status === 200 && outcome.eventId);
  const drainStartedAt = now();
  let delivered = deliveredDuringLoad;
  while (delivered < acknowledged.length && now() - drainStartedAt < DRAIN_TIMEOUT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    delivered = (await sink.counts()).total - deliveredBefore;
  }
  const drainedAt = now();
  // The search index may have given way to the load (apps/router/search-indexer.ts): its catch-up is this
  // rate's work too, so the CPU figures wait for it, and the next rate starts with it done.
  const indexLagAtEnd = await searchIndexLag(deployment);
  for (let lag = indexLagAtEnd; lag > 0 && now() - drainedAt < DRAIN_TIMEOUT_MS; lag = await searchIndexLag(deployment)) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const indexedAt = now();
  const usage = processUsage(pids);
  const roleCpuMs = pids.map((pid, index) => processUsage([pid]).cpuMs - roleUsageBefore[index]!);
  // The counts are written four times a second: wait for a write made after the drain.
  if (args.kafka) await new Promise((resolve) => setTimeout(resolve, 300));
  const requestsAfter = kafkaRequests(deployment);
  const hopsAfter = await scrapeHops();
  const peakRss = rss.stop();
  await dispatcher.close();

  const arrivals = await sink.arrivals(acknowledged.map((outcome) => outcome.eventId!));
  const e2e = acknowledged.flatMap((outcome, index) => (arrivals[index] == null ? [] : [arrivals[index]! - outcome.scheduledAt])).sort((a, b) => a - b);
  const lost = acknowledged.length - e2e.length;
  const ingest = answerLatencies(outcomes);
  const notAcknowledged = outcomes.length - acknowledged.length;
  // Refused by the relay's overload shed (503 OVERLOADED, docs/decisions/0089-ingest-overload-shed.md), and answered 503 at all.
  const unavailable = outcomes.filter((outcome) => outcome.status === 503).length;
  const loadSeconds = (loadEndedAt - loadStartedAt) / 1000;
  const deliveredRate = deliveredDuringLoad / loadSeconds;
  const e2eP99 = nearestRank(e2e, 99);
  const perEventCpu = (cpuMs: number) => ((cpuMs * 1000) / Math.max(1, acknowledged.length)).toFixed(0);
  const cpuUsPerEvent = ((usage.cpuMs - usageBefore.cpuMs) * 1000) / Math.max(1, acknowledged.length);
  const sustained = notAcknowledged === 0 && deliveredRate >= SUSTAINED.deliveredShare * rate && e2eP99 <= SUSTAINED.e2eP99Ms && lost === 0;
  console.log(
    `${labelled ? `[${label}] ` : ''}${String(rate).padStart(5)}/s offered for ${seconds} s: ingest p50 ${ms(nearestRank(ingest, 50))} p99 ${ms(nearestRank(ingest, 99))} max ${ms(ingest.at(-1))}, ` +
      `${notAcknowledged} not acknowledged (${unavailable} answered 503); delivered ${deliveredRate.toFixed(0)}/s during the load, backlog ${acknowledged.length - deliveredDuringLoad} at its end, ` +
      `${lost === 0 ? `drained in ${((drainedAt - drainStartedAt) / 1000).toFixed(1)} s` : `${lost} NOT delivered within ${DRAIN_TIMEOUT_MS / 1000} s`}; ` +
      `ingest -> delivery p50 ${ms(nearestRank(e2e, 50))} p99 ${ms(e2eP99)}; relay RSS peak ${mb(peakRss)}, ` +
      `cpu ${cpuUsPerEvent.toFixed(0)} us/event => ${sustained ? 'sustained' : 'NOT sustained'}`,
  );
  console.log(`      search index: ${indexLagAtEnd} events behind when the deliveries had drained, caught up ${((indexedAt - drainedAt) / 1000).toFixed(1)} s later`);
  console.log(
    `      during the load: event-loop delay of the thread taking the webhooks ${loopDelay}; connections waiting for its accept: ` +
      `peak ${accepts.peak}, some for ${(accepts.waitingMs / 1000).toFixed(1)} s; ${machine}; heap by thread at its end: ${heaps}`,
  );
  console.log(`      ${hopWaitsLine(hopsBefore, hopsAfter)}`);
  console.log(`      who kept the cores busy during the load: ${machineShares.cores(sharesBefore, sharesAfter, loadSeconds)}`);
  if (pids.length > 1) console.log(`      cpu by process: ${deployment.processes.map((member, index) => `${member.role} ${perEventCpu(roleCpuMs[index]!)}`).join(', ')} us/event`);
  if (storeWrites) {
    console.log(`      ${storeWritesPerEvent(writesBefore!, await storeWrites.settled(), acknowledged.length)}`);
    await storeWrites.close();
  }
  if (args.kafka) console.log(`      ${requestsPerEvent(requestsBefore, requestsAfter, acknowledged.length)}`);
  if (profileDir) console.log(`      the load's window in the CPU profiles: profile-stages.ts <file> --from ${loadStartedMicros} --to ${loadEndedMicros} --events ${acknowledged.length}`);
  return { rate, sustained, deliveredRate, cpuUsPerEvent, ingestP99: nearestRank(ingest, 99), e2eP99, peakRss };
}

const shape = `${args.split ? 'roles split into processes' : 'all roles in one process'}, ${args.kafka ? 'Kafka' : 'embedded log'} + ${args.postgres ? 'PostgreSQL' : 'SQLite'}`;
const destinations = queueType ? `one HTTP destination, then as many -> one ${queueType} destination` : 'one destination';
console.log(`soak bench: ${shape}; ${sourceCount} codehost source(s) -> ${destinations}, unique ${BODY_BYTES} B signed bodies; ${variants.map((variant) => variant.name).join(', then ')}; ${os.cpus().length} cores; ${new Date().toISOString()}`);
// The relay runs from dist/: it must hold the sources as they are now.
execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
await floorLine();
const queueKafka = queueType === 'kafka' ? await kafkaForQueueDestination() : undefined;
const sink = await startBenchSink(queueType ? ({ type: queueType, kafkaBrokers: queueKafka?.brokers } satisfies QueueReaderSpec) : undefined).catch(async (error: unknown) => {
  await queueKafka?.stop();
  throw error;
});
// The sink is a process of its own: a relay that fails to start must not leave it running.
const stopSink = async (error: unknown): Promise<never> => {
  await sink.stop();
  await queueKafka?.stop();
  throw error;
};
const forwardCarried = await floorLine(sink).catch(stopSink);
const receiver = tracingShapes.includes('export') ? await startOtlpReceiver() : undefined;

/** The relay's variables for a tracing shape (docs/decisions/0100-otel-sdk-disabled.md). */
function tracingEnv(tracing: TracingShape): Record<string, string> {
  if (tracing === 'none') return { OTEL_SDK_DISABLED: 'true' };
  return tracing === 'export' ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver!.url } : {};
}

interface VariantRun {
  variant: Variant;
  steps: Step[];
  queueSteps: Step[];
}

/** Every rate on a fresh relay of `variant`, stepping until one is not sustained. */
async function soakVariant(variant: Variant): Promise<VariantRun> {
  const run: VariantRun = { variant, steps: [], queueSteps: [] };
  const deployment = await startDeployment(tracingEnv(variant.tracing));
  const label = (type: string) => (variants.length > 1 ? `${type}, ${variant.name}` : type);
  try {
    if (deployment.kafkaShape) console.log(`broker: ${deployment.kafkaShape}`);
    const paths = await configure(deployment.apiUrl, sink, variant.transformation);
    for (const rate of rates) {
      const step = await soakAt(rate, deployment, paths.http, sink, label('http'));
      run.steps.push(step);
      const queueStep = paths.queue ? await soakAt(rate, deployment, paths.queue, sink, label(queueType!)) : undefined;
      if (queueStep) {
        run.queueSteps.push(queueStep);
        console.log(
          `      ${queueType} against http at ${rate}/s: delivered ${queueStep.deliveredRate.toFixed(0)}/s against ${step.deliveredRate.toFixed(0)}/s, ` +
            `relay cpu ${queueStep.cpuUsPerEvent.toFixed(0)} against ${step.cpuUsPerEvent.toFixed(0)} us/event (${(queueStep.cpuUsPerEvent / step.cpuUsPerEvent).toFixed(2)}x)`,
        );
      }
      if (!(queueStep ?? step).sustained && !args['all-rates']) break;
    }
  } finally {
    await deployment.stop();
  }
  return run;
}

const runs: VariantRun[] = [];
try {
  for (const variant of variants) runs.push(await soakVariant(variant));
} finally {
  await sink.stop();
  await queueKafka?.stop();
  if (receiver) console.log(`spans exported to the in-process OTLP receiver: ${receiver.spans().length}`);
  await receiver?.close();
}

/** The closing lines of one variant's steps. */
function summarise({ variant, steps, queueSteps }: VariantRun): void {
  const prefix = variants.length > 1 ? `[${variant.name}] ` : '';
  const atTarget = steps.find((step) => step.rate === TARGET.rate);
  if (atTarget) {
    const met = atTarget.sustained && atTarget.ingestP99 <= TARGET.ingestP99Ms && atTarget.e2eP99 <= TARGET.e2eP99Ms;
    console.log(`${prefix}target ${TARGET.rate}/s sustained with ingest p99 <= ${TARGET.ingestP99Ms} ms and ingest -> delivery p99 <= ${TARGET.e2eP99Ms} ms: ${met ? 'MET' : 'MISSED'}`);
  }
  const peak = Math.max(...[...steps, ...queueSteps].map((step) => step.peakRss));
  console.log(`${prefix}relay RSS peak ${mb(peak)} (target <= ${mb(TARGET.rssBytes)}: ${peak <= TARGET.rssBytes ? 'MET' : 'MISSED'})`);
  if (queueType) {
    const queueBest = queueSteps.filter((step) => step.sustained).at(-1);
    console.log(`${prefix}highest rate sustained to the ${queueType} destination: ${queueBest ? `${queueBest.rate} events/s` : `none of ${rates.join(', ')} events/s`}`);
  }
  const best = steps.filter((step) => step.sustained).at(-1);
  const forwardBest = forwardCarried.length > 0 ? `${Math.max(...forwardCarried)}/s` : `none of ${rates.join(', ')}/s`;
  console.log(`${prefix}highest rate sustained: ${best ? `${best.rate} events/s` : `none of ${rates.join(', ')} events/s`} (${shape}); the forward line's in this run: ${forwardBest}`);
}

/** Each later variant's CPU per event at each rate against the first one's at that rate. */
function compareVariants([first, ...others]: VariantRun[]): void {
  for (const other of others) {
    for (const step of other.steps) {
      const base = first!.steps.find((candidate) => candidate.rate === step.rate);
      if (!base) continue;
      const change = ((step.cpuUsPerEvent / base.cpuUsPerEvent - 1) * 100).toFixed(1);
      console.log(`${other.variant.name} against ${first!.variant.name} at ${step.rate}/s: relay cpu ${step.cpuUsPerEvent.toFixed(0)} against ${base.cpuUsPerEvent.toFixed(0)} us/event (${Number(change) >= 0 ? '+' : ''}${change}%)`);
    }
  }
}

if (profileDir) console.log(`CPU profiles: ${profileDir}`);
for (const run of runs) summarise(run);
compareVariants(runs);
