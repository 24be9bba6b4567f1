import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKafkaCluster, type KafkaCluster } from '../libs/testing/kafka-cluster.js';
import { respond, startHttpSink, type HttpSink } from '../libs/testing/http-sink.js';
import { startRelayProcess, type RelayProcess } from '../libs/testing/relay-child-process.js';
import type { StoreLocation } from '../libs/testing/store-targets.js';
import { waitFor } from '../libs/testing/wait-for.js';
import { Kafka, logLevel } from 'kafkajs';
import { API_KEY, configurePipeline, ENCRYPTION_KEY } from './pipeline-fixture.js';

/** A relay process on a 3-broker Apache Kafka of its own (never the shared one: its brokers get killed), routed to a sink. */
export interface FaultRig {
  cluster: KafkaCluster;
  relay: RelayProcess;
  sink: HttpSink;
  ingestUrl: string;
  stop(): Promise<void>;
}

export async function startFaultRig(store: StoreLocation): Promise<FaultRig> {
  const cluster = await startKafkaCluster({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'relay-kafka-faults-')) });
  const sink = await startHttpSink([respond(200)]);
  let relay: RelayProcess | undefined;
  const stop = async () => {
    await relay?.kill();
    await sink.close();
    await cluster.stop();
  };
  try {
    relay = await startRelayProcess('all', {
      RELAY_DATA_DIR: store.dataDir,
      ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
      KAFKA_BROKERS: cluster.brokers.join(','),
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      RELAY_API_KEY: API_KEY,
      RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
      RELAY_DEFAULT_PLAN: 'enterprise',
    });
    const pipeline = await configurePipeline(relay.url, `${sink.url}/hooks`);
    return { cluster, relay, sink, ingestUrl: `${relay.url}${pipeline.ingestPath}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One webhook's answer; status 0 for one that never came (or a refused connection). */
export interface Answer {
  status: number;
  ms: number;
  /** When the answer came (epoch ms). */
  answeredAt: number;
  eventId?: string;
  code?: string;
  retryAfter?: string | null;
}

export const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * values.length) - 1)] ?? 0;

export async function send(url: string, n: number): Promise<Answer> {
  const startedAt = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }), signal: AbortSignal.timeout(10_000) });
    const body = (await response.json()) as { eventId?: string; code?: string };
    return { status: response.status, ms: performance.now() - startedAt, answeredAt: Date.now(), eventId: body.eventId, code: body.code, retryAfter: response.headers.get('retry-after') };
  } catch {
    return { status: 0, ms: performance.now() - startedAt, answeredAt: Date.now() };
  }
}

/**
 * Sends `rate` webhooks a second for `seconds`, each on its own schedule (an open loop: a slow answer
 * delays no other send); `during` starts with the first send and runs beside the load.
 */
export async function steadyLoad(url: string, rate: number, seconds: number, during?: (elapsedMs: number) => Promise<void> | void): Promise<Answer[]> {
  const startedAt = Date.now();
  const sends: Promise<Answer>[] = [];
  let hook: Promise<void> | undefined;
  for (let n = 0; n < rate * seconds; n += 1) {
    const wait = startedAt + (n * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(send(url, n));
    if (during && !hook) hook = Promise.resolve(during(Date.now() - startedAt));
  }
  await hook;
  return Promise.all(sends);
}

/** Answers by status, and their time's p50/p99/max. */
export function answersLine(answers: Answer[]): string {
  const byStatus = answers.reduce<Record<string, number>>((counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }), {});
  const ms = answers.map((answer) => answer.ms);
  return `${JSON.stringify(byStatus)}, p50/p99/max ${percentile(ms, 50).toFixed(0)}/${percentile(ms, 99).toFixed(0)}/${Math.max(...ms).toFixed(0)} ms`;
}

type SinkRequest = HttpSink['requests'][number];

const eventIdOf = (request: SinkRequest) => String(request.headers['x-relay-event-id']);

/** Waits until every acknowledged answer's event has reached the sink. */
export async function everyAcknowledgedDelivered(sink: HttpSink, answers: Answer[], timeoutMs: number): Promise<void> {
  const acknowledged = answers.filter((answer) => answer.status === 200).map((answer) => answer.eventId!);
  await waitFor(
    `every acknowledged webhook (${acknowledged.length}) delivered; read: how many have not arrived`,
    () => {
      const delivered = new Set(sink.requests.map(eventIdOf));
      return acknowledged.filter((eventId) => !delivered.has(eventId)).length;
    },
    (missing) => missing === 0,
    timeoutMs,
    200,
  );
}

/** For each acknowledged answer, how long its event waited for its first delivery from the answer, or from `notBefore` if later. */
function deliveryWaits(acknowledged: Answer[], requests: readonly SinkRequest[], notBefore = 0): number[] {
  const firstDelivery = new Map<string, number>();
  for (const request of requests) firstDelivery.set(eventIdOf(request), Math.min(firstDelivery.get(eventIdOf(request)) ?? Infinity, request.receivedAt));
  return acknowledged.map((answer) => firstDelivery.get(answer.eventId!)! - Math.max(answer.answeredAt, notBefore));
}

/**
 * Watches the cluster's metadata from before a kill: `movedAt` resolves with when no partition is led by
 * `broker` any more (nor leaderless), the moment the controller has handed its partitions to new leaders.
 */
async function leadersWatch(cluster: KafkaCluster, broker: number): Promise<{ movedAt(): Promise<number> }> {
  const admin = new Kafka({ clientId: 'drill-leaders', brokers: cluster.brokers, logLevel: logLevel.NOTHING, connectionTimeout: 1_000, retry: { retries: 0 } }).admin();
  await admin.connect();
  const stillLed = async () => {
    try {
      const { topics } = await admin.fetchTopicMetadata();
      return topics.flatMap((topic) => topic.partitions).filter((partition) => partition.leader === broker || partition.leader < 0).length;
    } catch {
      // The connection it asked on was the killed broker's: asked again on the next look.
      return Infinity;
    }
  };
  return {
    async movedAt() {
      try {
        await waitFor(`every partition led by a broker other than ${broker}`, stillLed, (count) => count === 0, 60_000, 100);
        return Date.now();
      } finally {
        await admin.disconnect();
      }
    },
  };
}

/** Deliveries past the first of each event. */
function duplicatesOf(requests: readonly SinkRequest[]): { duplicates: number; events: number } {
  const events = new Set(requests.map(eventIdOf));
  return { duplicates: requests.length - events.size, events: events.size };
}

export interface BrokerKillDrill {
  answers: Answer[];
  afterKill: Answer[];
  /** From acknowledgement to first delivery, for each webhook acknowledged after the kill. */
  waitsAfterKill: number[];
  /** When the killed broker's partitions had new leaders, from the kill. */
  newLeadersMs: number;
  /** The same waits counted from the new leaders for those acknowledged before them: issue 54's "delivery resumes within 10 s of the new leaders". */
  waitsFromNewLeaders: number[];
  /** When the last acknowledged webhook arrived, from the kill. */
  allDeliveredMs: number;
  /** The load once the broker is back. */
  again: Answer[];
  duplicates: number;
  events: number;
}

export interface BrokerKillOptions {
  cluster: KafkaCluster;
  sink: HttpSink;
  ingestUrl: string;
  rate: number;
  seconds: number;
  killAfterMs: number;
  brokerId: number;
  /** How long the acknowledged webhooks may take to arrive, after each load. */
  drainMs: number;
}

/**
 * Issue 54's drill: SIGKILL one broker during a steady load, wait for every acknowledged webhook to
 * arrive, restart the broker, send 5 s more; then what the sender saw and what the destination got.
 */
export async function brokerKillDrill(options: BrokerKillOptions): Promise<BrokerKillDrill> {
  const { cluster, sink, ingestUrl, rate } = options;
  const before = sink.requests.length;
  let killedAt = 0;
  const leaders = await leadersWatch(cluster, options.brokerId);
  let leadersMovedAt: Promise<number> | undefined;
  const answers = await steadyLoad(ingestUrl, rate, options.seconds, async (elapsed) => {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.killAfterMs - elapsed)));
    killedAt = Date.now();
    await cluster.kill(options.brokerId);
    leadersMovedAt = leaders.movedAt();
  });
  const newLeadersAt = await leadersMovedAt!;
  const afterKill = answers.filter((answer) => answer.answeredAt >= killedAt);
  await everyAcknowledgedDelivered(sink, answers, options.drainMs);
  const delivered = sink.requests.slice(before);
  const allDeliveredMs = Math.max(...delivered.map((request) => request.receivedAt)) - killedAt;
  const acknowledgedAfterKill = afterKill.filter((answer) => answer.status === 200);
  const waitsAfterKill = deliveryWaits(acknowledgedAfterKill, delivered);
  const waitsFromNewLeaders = deliveryWaits(acknowledgedAfterKill, delivered, newLeadersAt);
  await cluster.restart(options.brokerId);
  const again = await steadyLoad(ingestUrl, rate, 5);
  await everyAcknowledgedDelivered(sink, again, options.drainMs);
  return { answers, afterKill, waitsAfterKill, newLeadersMs: newLeadersAt - killedAt, waitsFromNewLeaders, allDeliveredMs, again, ...duplicatesOf(sink.requests.slice(before)) };
}

/** The drill's figures in one line. */
export function drillLine(drill: BrokerKillDrill, options: Pick<BrokerKillOptions, 'brokerId' | 'killAfterMs'>): string {
  const waits = drill.waitsAfterKill;
  return (
    `broker ${options.brokerId} killed ${options.killAfterMs / 1000} s in: answers ${answersLine(drill.answers)}; after the kill ${answersLine(drill.afterKill)}; ` +
    `all acknowledged delivered ${(drill.allDeliveredMs / 1000).toFixed(1)} s after the kill; from acknowledgement to delivery after the kill ` +
    `p50/p99/max ${percentile(waits, 50).toFixed(0)}/${percentile(waits, 99).toFixed(0)}/${Math.max(...waits).toFixed(0)} ms; ` +
    `new leaders ${(drill.newLeadersMs / 1000).toFixed(1)} s after the kill, the longest wait from them ${Math.max(...drill.waitsFromNewLeaders).toFixed(0)} ms; ` +
    `restarted: ${answersLine(drill.again)}; duplicates ${drill.duplicates} of ${drill.events} events`
  );
}
