/**
 * Ingest-to-delivery figures of the embedded default (all roles in one process, SQLite store + embedded
 * log in a temp dir, started as `node apps/relay/main.ts` in a child process), with a local sink in a
 * child process of its own and the load generated here:
 *
 *   bare     node:http that reads the body and answers 200 (bench/ingest/bench-target.ts), autocannon
 *   (a)      sustained: autocannon for --duration s (default 60) into one source routed to one destination,
 *            unique 1 KB bodies; ingest rps, delivered/s and the lag (acknowledged - delivered) over time,
 *            then how long the backlog takes to drain. Delivery keeps up when the lag stays flat: one
 *            source's deliveries are bounded by its window (RELAY_MAX_IN_FLIGHT_PER_SOURCE, default 64)
 *            per event-loop turn, ingest by the 50 connections per turn
 *   (a16)    the same with the load spread round-robin over 16 sources routed to that destination
 *   (b)      latency: --rate events/s (default 1,000) paced (open loop) for 10 s into one source -> one destination;
 *            ingest-to-delivery p50/p99 (sink arrival minus the moment the ingest request started)
 *   (c)      fan-out: one source routed to 10 destinations; deliveries/s while a fixed batch is delivered
 *   (o)      ordered: one source -> one destination with `ordering: "source"` answering after 5 ms, then after
 *            50 ms; deliveries/s while a fixed batch is delivered, beside the ceiling of one request at a
 *            time (1000 / answer ms)
 *
 *   node --import tsx bench/relay/bench-relay.ts [--duration <s>] [--rate <events/s>] [--only bare,a,a16,b,c,o]
 *
 * Each scenario gets a fresh relay and data directory. Machine: whatever runs it; the relay, the sink and
 * the load generator share its CPUs, so compare figures from one run.
 */
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startRelayProcess, tempDataDir } from '../../libs/testing/relay-child-process.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { apiClient } from '../../testing/api-client.js';
import type { TargetReady } from '../ingest/bench-target.js';
import { startBenchSink, type BenchSink } from './sink-client.js';

const API_KEY = 'bench-relay-key-0123456789';
const CONNECTIONS = 50;
const BODY_BYTES = 1024;
const BARE_SECONDS = 10;
const SAMPLE_MS = 5_000;
const DRAIN_TIMEOUT_MS = 300_000;
const PACED_SECONDS = 10;
const PACED_WARM_UP_SECONDS = 2;
const FAN_OUT = 10;
const FAN_OUT_EVENTS = 3_000;
/** (a) again with the load spread over this many sources, each with a window of its own (that still share the destination's places). */
const SPREAD_SOURCES = 16;
/** (o): the destination's answer time, and the events delivered in order at each. */
const ORDERED_RUNS = [
  { answerMs: 5, events: 1_000 },
  { answerMs: 50, events: 200 },
];

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    rate: { type: 'string', default: '1000' },
    only: { type: 'string', default: 'bare,a,a16,b,c,o' },
  },
});
const sustainedSeconds = Number(args.duration);
const PACED_RATE = Number(args.rate);
const only = new Set(args.only.split(','));

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sequence = 0;
/** A 1 KB JSON body no other request carries: neither dedup nor any cache can short-circuit it. */
function uniqueBody(): string {
  const head = `{"type":"order.created","bench":"${process.pid}-${++sequence}","padding":"`;
  return `${head}${'x'.repeat(BODY_BYTES - head.length - 2)}"}`;
}

function load(options: autocannon.Options, onResponse?: (statusCode: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    if (onResponse) instance.on('response', (_client, statusCode) => onResponse(statusCode));
  });
}

const webhookRequest = (ingestPath: string): autocannon.Request => ({
  method: 'POST',
  path: ingestPath,
  setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json' }, body: uniqueBody() }),
});

interface BenchRelay {
  url: string;
  /** One per source. */
  ingestPaths: string[];
  stop(): Promise<void>;
}

/**
 * A fresh embedded relay with `sources` sources, each routed to every one of `destinations` destinations at
 * `<sink>/d<n><query>`, created with `settings`.
 */
async function startBenchRelay(
  sink: BenchSink,
  { sources, destinations, query = '', settings = {} }: { sources: number; destinations: number; query?: string; settings?: object },
): Promise<BenchRelay> {
  const dataDir = tempDataDir();
  const relay = await startRelayProcess('all', {
    RELAY_DATA_DIR: dataDir,
    RELAY_API_KEY: API_KEY,
    // 10,000 requests per second per source: the plan's rate limit is not what is measured.
    RELAY_DEFAULT_PLAN: 'enterprise',
  });
  const api = apiClient(relay.url, API_KEY);
  const expectCreated = async (path: string, body: object) => {
    const response = await api('POST', path, { body });
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${response.text}`);
    return response.body;
  };
  const created = [];
  for (let n = 0; n < sources; n += 1) created.push(await expectCreated('/api/sources', { name: `Bench ${n}`, slug: `bench-${n}` }));
  for (let n = 0; n < destinations; n += 1) {
    const destination = await expectCreated('/api/destinations', { name: `Sink ${n}`, url: `${sink.url}/d${n}${query}`, ...settings });
    for (const source of created) await expectCreated('/api/routes', { sourceId: source.id, destinationId: destination.id });
  }
  return {
    url: relay.url,
    ingestPaths: created.map((source) => new URL(source.webhookUrl).pathname),
    async stop() {
      await relay.terminate();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls the sink until it has `count` deliveries; returns when (ms since the epoch), or null on timeout. */
async function deliveredAll(sink: BenchSink, count: number, timeoutMs: number): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await sink.counts()).total >= count) return now();
    await sleep(100);
  }
  return null;
}

const rate = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : 0).toFixed(0);

async function bare(): Promise<void> {
  const child = fork(path.join(import.meta.dirname, '../ingest/bench-target.ts'), ['bare'], { execArgv: ['--import', 'tsx'] });
  const ready = await new Promise<TargetReady>((resolve) => child.once('message', (message: { ready: TargetReady }) => resolve(message.ready)));
  const result = await load({ url: ready.url, connections: CONNECTIONS, duration: BARE_SECONDS, requests: [webhookRequest(ready.path)] });
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.send({ stop: true });
  });
  console.log(
    `bare node:http (reads the body, answers 200), ${CONNECTIONS} connections, ${BARE_SECONDS} s: ` +
      `${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
  );
}

async function sustained(sink: BenchSink, sources: number): Promise<void> {
  await sink.reset();
  const relay = await startBenchRelay(sink, { sources, destinations: 1 });
  let acknowledged = 0;
  let refused = 0;
  const startedAt = now();
  const rows: string[] = [];
  let last = { at: startedAt, acknowledged: 0, delivered: 0 };
  const sampler = setInterval(() => {
    void sink.counts().then(({ total }) => {
      const at = now();
      rows.push(
        `  ${((at - startedAt) / 1000).toFixed(0).padStart(4)} s  acknowledged ${String(acknowledged).padStart(7)}  delivered ${String(total).padStart(7)}  ` +
          `lag ${String(acknowledged - total).padStart(7)}  ingest ${rate(acknowledged - last.acknowledged, at - last.at).padStart(5)}/s  ` +
          `delivered ${rate(total - last.delivered, at - last.at).padStart(5)}/s`,
      );
      last = { at, acknowledged, delivered: total };
    });
  }, SAMPLE_MS);
  // Each connection cycles through the sources' ingest paths.
  const result = await load({ url: relay.url, connections: CONNECTIONS, duration: sustainedSeconds, requests: relay.ingestPaths.map(webhookRequest) }, (status) => {
    if (status === 200) acknowledged += 1;
    else refused += 1;
  });
  const loadEndedAt = now();
  const deliveredAtEnd = (await sink.counts()).total;
  const drainedAt = await deliveredAll(sink, acknowledged, DRAIN_TIMEOUT_MS);
  clearInterval(sampler);
  await relay.stop();
  const seconds = (loadEndedAt - startedAt) / 1000;
  console.log(`(a) sustained, ${CONNECTIONS} connections, ${sustainedSeconds} s, ${sources === 1 ? 'one source' : `${sources} sources`} -> one destination, unique ${BODY_BYTES} B bodies`);
  for (const row of rows) console.log(row);
  console.log(
    `  => ingest ${(acknowledged / seconds).toFixed(0)} acknowledged/s (p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
      `${refused + result.errors + result.timeouts} not acknowledged); delivered ${(deliveredAtEnd / seconds).toFixed(0)}/s during the load; ` +
      `lag at the end ${acknowledged - deliveredAtEnd}; ` +
      (drainedAt === null
        ? `NOT drained within ${DRAIN_TIMEOUT_MS / 1000} s`
        : `drained ${((drainedAt - loadEndedAt) / 1000).toFixed(1)} s after the load (${rate(acknowledged - deliveredAtEnd, drainedAt - loadEndedAt)}/s)`),
  );
}

async function paced(sink: BenchSink): Promise<void> {
  await sink.reset();
  const relay = await startBenchRelay(sink, { sources: 1, destinations: 1 });
  const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
  const ingestUrl = `${relay.url}${relay.ingestPaths[0]}`;
  const postedAt = new Map<string, number>();
  const answerMs: number[] = [];
  let failed = 0;
  const post = async (measured: boolean) => {
    const startedAt = now();
    try {
      const response = await request(ingestUrl, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json' }, body: uniqueBody() });
      const answer = (await response.body.json()) as { eventId?: string };
      if (response.statusCode !== 200 || !answer.eventId) throw new Error(`ingest answered ${response.statusCode}`);
      if (!measured) return;
      postedAt.set(answer.eventId, startedAt);
      answerMs.push(now() - startedAt);
    } catch {
      failed += 1;
    }
  };
  // Open loop: whatever the answers take, requests start on schedule (a provider does not wait for us).
  const run = async (seconds: number, measured: boolean) => {
    const inFlight: Promise<void>[] = [];
    const begin = now();
    let sent = 0;
    while (sent < seconds * PACED_RATE) {
      const due = Math.min(seconds * PACED_RATE, Math.floor(((now() - begin) * PACED_RATE) / 1000));
      for (; sent < due; sent += 1) inFlight.push(post(measured));
      await sleep(1);
    }
    await Promise.all(inFlight);
    return (now() - begin) / 1000;
  };
  await run(PACED_WARM_UP_SECONDS, false);
  await deliveredAll(sink, PACED_WARM_UP_SECONDS * PACED_RATE - failed, 60_000);
  const seconds = await run(PACED_SECONDS, true);
  const eventIds = [...postedAt.keys()];
  await deliveredAll(sink, PACED_WARM_UP_SECONDS * PACED_RATE + eventIds.length, 120_000);
  const arrivals = await sink.arrivals(eventIds);
  await dispatcher.close();
  await relay.stop();
  const latencies = eventIds.flatMap((eventId, index) => (arrivals[index] == null ? [] : [arrivals[index]! - postedAt.get(eventId)!])).sort((a, b) => a - b);
  const answers = answerMs.sort((a, b) => a - b);
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(
    `(b) latency at ${PACED_RATE} events/s paced for ${PACED_SECONDS} s (${(eventIds.length / seconds).toFixed(0)}/s achieved), one source -> one destination:\n` +
      `  ingest-to-delivery p50 ${ms(nearestRank(latencies, 50))}, p90 ${ms(nearestRank(latencies, 90))}, p99 ${ms(nearestRank(latencies, 99))}, max ${ms(latencies.at(-1) ?? NaN)}; ` +
      `ingest answer p50 ${ms(nearestRank(answers, 50))}, p99 ${ms(nearestRank(answers, 99))}; ` +
      `${eventIds.length - latencies.length} not delivered, ${failed} ingest failures`,
  );
}

async function fanOut(sink: BenchSink): Promise<void> {
  await sink.reset();
  const relay = await startBenchRelay(sink, { sources: 1, destinations: FAN_OUT });
  const startedAt = now();
  let acknowledged = 0;
  await load({ url: relay.url, connections: CONNECTIONS, amount: FAN_OUT_EVENTS, requests: relay.ingestPaths.map(webhookRequest) }, (status) => {
    if (status === 200) acknowledged += 1;
  });
  const ingestedAt = now();
  const expected = acknowledged * FAN_OUT;
  const doneAt = await deliveredAll(sink, expected, DRAIN_TIMEOUT_MS);
  const { total, perPath } = await sink.counts();
  await relay.stop();
  const spread = Object.values(perPath);
  console.log(
    `(c) fan-out, one source -> ${FAN_OUT} destinations, ${acknowledged} events (${expected} deliveries) ingested in ${((ingestedAt - startedAt) / 1000).toFixed(1)} s:\n` +
      (doneAt === null
        ? `  NOT all delivered within ${DRAIN_TIMEOUT_MS / 1000} s (${total} of ${expected})`
        : `  ${rate(total, doneAt - startedAt)} deliveries/s from the first ingest to the last delivery (${((doneAt - startedAt) / 1000).toFixed(1)} s); ` +
          `per destination ${Math.min(...spread)}..${Math.max(...spread)}`),
  );
}

async function ordered(sink: BenchSink): Promise<void> {
  for (const { answerMs, events } of ORDERED_RUNS) {
    await sink.reset();
    const relay = await startBenchRelay(sink, { sources: 1, destinations: 1, query: `?delayMs=${answerMs}`, settings: { ordering: 'source' } });
    const startedAt = now();
    let acknowledged = 0;
    await load({ url: relay.url, connections: CONNECTIONS, amount: events, requests: relay.ingestPaths.map(webhookRequest) }, (status) => {
      if (status === 200) acknowledged += 1;
    });
    const doneAt = await deliveredAll(sink, acknowledged, DRAIN_TIMEOUT_MS);
    const { total } = await sink.counts();
    await relay.stop();
    console.log(
      `(o) ordered, one source -> one destination (ordering "source") answering in ${answerMs} ms, ${acknowledged} events: ` +
        (doneAt === null
          ? `NOT all delivered within ${DRAIN_TIMEOUT_MS / 1000} s (${total} of ${acknowledged})`
          : `${rate(total, doneAt - startedAt)} deliveries/s from the first ingest to the last delivery (ceiling of one at a time: ${(1000 / answerMs).toFixed(0)}/s)`),
    );
  }
}

console.log(`relay bench (embedded default, all roles in one process); ${new Date().toISOString()}`);
const sink = await startBenchSink();
try {
  if (only.has('bare')) await bare();
  if (only.has('a')) await sustained(sink, 1);
  if (only.has('a16')) await sustained(sink, SPREAD_SOURCES);
  if (only.has('b')) await paced(sink);
  if (only.has('c')) await fanOut(sink);
  if (only.has('o')) await ordered(sink);
} finally {
  await sink.stop();
}
