import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { kafkaRuntimeAvailable, startKafkaCluster, type KafkaCluster } from '../../libs/testing/kafka-cluster.js';
import { respond, startHttpSink, type HttpSink } from '../../libs/testing/http-sink.js';
import { API_KEY, configurePipeline, ENCRYPTION_KEY, type Pipeline } from '../../testing/pipeline-fixture.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { printOutputOnFailure, startRelayProcess, type RelayProcess } from '../../libs/testing/relay-child-process.js';
import { waitFor } from '../../libs/testing/wait-for.js';

/**
 * Broker faults on Apache Kafka itself: a cluster of 3 brokers of this suite's own (the shared one of
 * `npm run kafka:up` is never killed), a relay process on it with PostgreSQL, webhooks sent at a steady
 * rate while brokers are SIGKILLed. The rate and window are smaller than a production drill's (1,000/s for
 * 30 s): this runs on CI's 2 cores beside 3 brokers of its own (and, in CI, the shared cluster's 3).
 * At 100/s on the shared machine (load average 15) the relay answered at a p50 of 14 s before any
 * fault, so the rate is what the machine sustains, not what the relay does (see the decision record).
 */
const RATE_PER_SECOND = 20;
const LOAD_SECONDS = 20;
/** Every answer comes within this, whatever the brokers do (DESIGN 7, Unavailable answers). */
const ANSWER_BOUND_MS = 1_000;
/** Issue 54: delivery resumes within 10 s of the dead broker's partitions getting new leaders. */
const RESUME_BOUND_MS = 10_000;

interface Answer {
  status: number;
  ms: number;
  /** When the answer came (epoch ms). */
  answeredAt: number;
  eventId?: string;
  code?: string;
  retryAfter?: string | null;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * values.length) - 1)] ?? 0;

/** One webhook; an answer that never comes (or a refused connection) shows as status 0. */
async function send(url: string, n: number): Promise<Answer> {
  const startedAt = performance.now();
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }), signal: AbortSignal.timeout(10_000) });
    const body = (await response.json()) as { eventId?: string; code?: string };
    return { status: response.status, ms: performance.now() - startedAt, answeredAt: Date.now(), eventId: body.eventId, code: body.code, retryAfter: response.headers.get('retry-after') };
  } catch {
    return { status: 0, ms: performance.now() - startedAt, answeredAt: Date.now() };
  }
}

/** Sends `RATE_PER_SECOND` webhooks a second for `seconds`, each on its own schedule (an open loop: a slow answer delays no other send). */
async function steadyLoad(url: string, seconds: number, during?: (elapsedMs: number) => Promise<void> | void): Promise<Answer[]> {
  const startedAt = Date.now();
  const sends: Promise<Answer>[] = [];
  const total = RATE_PER_SECOND * seconds;
  let hook: Promise<void> | undefined;
  for (let n = 0; n < total; n += 1) {
    const due = startedAt + (n * 1000) / RATE_PER_SECOND;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(send(url, n));
    // Started once, with the first send; it runs beside the load.
    if (during && !hook) hook = Promise.resolve(during(Date.now() - startedAt));
  }
  await hook;
  return Promise.all(sends);
}

/** For each acknowledged answer, how long its event waited from the answer to its first delivery. */
function deliveryWaits(acknowledged: Answer[], requests: readonly { receivedAt: number; headers: Record<string, unknown> }[]): number[] {
  const firstDelivery = new Map<string, number>();
  for (const request of requests) {
    const eventId = String(request.headers['x-relay-event-id']);
    firstDelivery.set(eventId, Math.min(firstDelivery.get(eventId) ?? Infinity, request.receivedAt));
  }
  return acknowledged.map((answer) => firstDelivery.get(answer.eventId!)! - answer.answeredAt);
}

describe('a relay on Apache Kafka whose brokers fail [Kafka 4.x, 3 brokers of its own + PostgreSQL]', function () {
  this.timeout(600_000);
  let cluster: KafkaCluster | undefined;
  let relay: RelayProcess | undefined;
  let sink: HttpSink;
  let pipeline: Pipeline;
  let cleanupStore: (() => Promise<void>) | undefined;
  let ingestUrl: string;

  before(async function () {
    if (!kafkaRuntimeAvailable()) {
      if (process.env.CI === 'true') throw new Error('java and mvn are required when CI=true (the Kafka fault suite runs Apache Kafka)');
      console.log('      skipped: java or mvn is not installed (apt-get install openjdk-17-jre-headless maven)');
      this.skip();
    }
    cluster = await startKafkaCluster({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'relay-kafka-faults-')) });
    const store = await STORE_TARGETS[1]!.prepare(this);
    cleanupStore = store.cleanup;
    sink = await startHttpSink([respond(200)]);
    const env = {
      RELAY_DATA_DIR: store.dataDir,
      DATABASE_URL: store.databaseUrl!,
      KAFKA_BROKERS: cluster.brokers.join(','),
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      RELAY_API_KEY: API_KEY,
      RELAY_ENCRYPTION_KEY: ENCRYPTION_KEY,
      RELAY_DEFAULT_PLAN: 'enterprise',
    };
    relay = await startRelayProcess('all', env);
    pipeline = await configurePipeline(relay.url, `${sink.url}/hooks`);
    ingestUrl = `${relay.url}${pipeline.ingestPath}`;
  });

  printOutputOnFailure(() => [relay]);

  after(async function () {
    await relay?.kill();
    await sink?.close();
    await cluster?.stop();
    await cleanupStore?.();
  });

  const deliveredIds = () => new Set(sink.requests.map((request) => String(request.headers['x-relay-event-id'])));

  async function everyAcknowledgedDelivered(answers: Answer[], timeoutMs: number): Promise<void> {
    const acknowledged = answers.filter((answer) => answer.status === 200).map((answer) => answer.eventId!);
    await waitFor(
      `every acknowledged webhook (${acknowledged.length}) delivered; read: how many have not arrived`,
      () => acknowledged.filter((eventId) => !deliveredIds().has(eventId)).length,
      (missing) => missing === 0,
      timeoutMs,
      200,
    );
  }

  const summary = (answers: Answer[]) => {
    const byStatus = answers.reduce<Record<string, number>>((counts, answer) => ({ ...counts, [answer.status]: (counts[answer.status] ?? 0) + 1 }), {});
    return `${JSON.stringify(byStatus)}, p50/p99/max ${percentile(answers.map((a) => a.ms), 50).toFixed(0)}/${percentile(answers.map((a) => a.ms), 99).toFixed(0)}/${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms`;
  };

  it(`loses no acknowledged webhook when a broker is SIGKILLed during ${LOAD_SECONDS} s of ${RATE_PER_SECOND}/s, and takes it back when it restarts`, async function () {
    const before = sink.requests.length;
    let killedAt = 0;
    const answers = await steadyLoad(ingestUrl, LOAD_SECONDS, async (elapsed) => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5_000 - elapsed)));
      killedAt = Date.now();
      await cluster!.kill(2);
    });
    const afterKill = answers.slice(RATE_PER_SECOND * 5);
    await everyAcknowledgedDelivered(answers, 60_000);
    const deliveredAt = Math.max(...sink.requests.slice(before).map((request) => request.receivedAt));
    const waits = deliveryWaits(afterKill.filter((answer) => answer.status === 200), sink.requests.slice(before));
    console.log(
      `      broker 2 killed 5 s in: answers ${summary(answers)}; after the kill ${summary(afterKill)}; all acknowledged delivered ${((deliveredAt - killedAt) / 1000).toFixed(1)} s after the kill; ` +
        `from acknowledgement to delivery after the kill p50/p99/max ${percentile(waits, 50).toFixed(0)}/${percentile(waits, 99).toFixed(0)}/${Math.max(...waits).toFixed(0)} ms`,
    );

    const sentBefore = sink.requests.length;
    await cluster!.restart(2);
    const again = await steadyLoad(ingestUrl, 5);
    await everyAcknowledgedDelivered(again, 60_000);
    const perEvent = new Map<string, number>();
    for (const request of sink.requests.slice(before)) perEvent.set(String(request.headers['x-relay-event-id']), (perEvent.get(String(request.headers['x-relay-event-id'])) ?? 0) + 1);
    const duplicates = [...perEvent.values()].reduce((sum, count) => sum + count - 1, 0);
    console.log(`      broker 2 restarted: ${summary(again)}; ${sink.requests.length - sentBefore} requests after the restart; duplicates over the whole test ${duplicates} of ${perEvent.size} events`);
    // Ingest kept answering, and only 200 (durable on 2 of 3 replicas) or 503 (not taken).
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 503).length, 'answers neither 200 nor 503').to.equal(0);
    // How many are 503 depends on how long the controller takes to fence the dead broker and the producer
    // to learn the new leaders (measured: 57 to 121 of the 300 sent after the kill); it is reported, not bounded.
    expect(percentile(answers.map((answer) => answer.ms), 99), 'p99 answer ms').to.be.at.most(ANSWER_BOUND_MS);
    expect(again.every((answer) => answer.status === 200), 'every webhook acknowledged once the broker is back').to.equal(true);
    // At least once: offsets a group could not commit while its coordinator was the killed broker, and a
    // consumer restarted after kafkajs gave up on that broker, are read again. Bound: one duplicate per
    // webhook acknowledged from the kill on (measured: 0 to 156 of 400 events).
    const acknowledgedAfterKill = afterKill.filter((answer) => answer.status === 200).length;
    expect(duplicates, 'duplicate deliveries').to.be.at.most(acknowledgedAfterKill);
    // A webhook acknowledged after the kill was durable on the new leaders: it waits no longer than the bound.
    expect(Math.max(...waits), 'longest wait from acknowledgement to delivery after the kill, ms').to.be.at.most(RESUME_BOUND_MS);
  });

  it('answers 503 BROKER_UNAVAILABLE with Retry-After within 1 s while every broker is down, and resumes without a restart when they return', async function () {
    const downSeconds = 10;
    for (const node of cluster!.nodes) await cluster!.kill(node.id);
    const downAt = Date.now();
    const answers: Answer[] = [];
    const readyz: number[] = [];
    while (Date.now() - downAt < downSeconds * 1000) {
      const [answer, ready] = await Promise.all([send(ingestUrl, answers.length), fetch(`${relay!.url}/readyz`)]);
      answers.push(answer);
      readyz.push(ready.status);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(`      all brokers down ${downSeconds} s: ${summary(answers)}; /readyz ${JSON.stringify(readyz)}`);

    await Promise.all(cluster!.nodes.map((node) => cluster!.restart(node.id)));
    const back = await waitFor('ingest acknowledging again', () => send(ingestUrl, -1), (answer) => answer.status === 200, 120_000, 500);
    console.log(`      brokers back: ingest acknowledged again ${((Date.now() - downAt) / 1000 - downSeconds).toFixed(1)} s after their restart`);
    const resumed = await steadyLoad(ingestUrl, 5);
    expect(resumed.every((answer) => answer.status === 200), `every webhook acknowledged after the return: ${summary(resumed)}`).to.equal(true);
    await everyAcknowledgedDelivered([back, ...resumed], 90_000);
    expect((await fetch(`${relay!.url}/readyz`)).status).to.equal(200);

    expect(answers.filter((answer) => answer.status === 200), 'acknowledged with no broker up').to.deep.equal([]);
    expect(answers.filter((answer) => !(answer.status === 503 && answer.code === 'BROKER_UNAVAILABLE' && answer.retryAfter === '1')), 'answers other than 503 BROKER_UNAVAILABLE, Retry-After 1').to.deep.equal([]);
    expect(percentile(answers.map((answer) => answer.ms), 50), 'median answer ms').to.be.at.most(ANSWER_BOUND_MS);
    expect(readyz.slice(-3), '/readyz once the brokers are known down').to.deep.equal([503, 503, 503]);
  });
});
