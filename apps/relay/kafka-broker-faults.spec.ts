import { expect } from 'chai';
import { kafkaRuntimeAvailable } from '../../libs/testing/kafka-cluster.js';
import { STORE_TARGETS } from '../../libs/testing/store-targets.js';
import { printOutputOnFailure } from '../../libs/testing/relay-child-process.js';
import { waitFor } from '../../libs/testing/wait-for.js';
import { answersLine, brokerKillDrill, drillLine, everyAcknowledgedDelivered, percentile, send, startFaultRig, steadyLoad, type Answer, type FaultRig } from '../../testing/broker-kill-drill.js';

/**
 * Broker faults on Apache Kafka itself: a cluster of 3 brokers of this suite's own (the shared one of
 * `npm run kafka:up` is never killed), a relay process on it with PostgreSQL, webhooks sent at a steady
 * rate while brokers are SIGKILLed. The rate and window are smaller than a production drill's (1,000/s for
 * 30 s, bench/broker/bench-broker-kill.ts): this runs on CI's 2 cores beside 3 brokers of its own (and,
 * in CI, the shared cluster's 3).
 * At 100/s on the shared machine (load average 15) the relay answered at a p50 of 14 s before any
 * fault, so the rate is what the machine sustains, not what the relay does (see the decision record).
 */
const RATE_PER_SECOND = 20;
const LOAD_SECONDS = 20;
/** Every answer comes within this, whatever the brokers do (DESIGN 7, Unavailable answers). */
const ANSWER_BOUND_MS = 1_000;
/** Issue 54: delivery resumes within 10 s of the dead broker's partitions getting new leaders. */
const RESUME_BOUND_MS = 10_000;

describe('a relay on Apache Kafka whose brokers fail [Kafka 4.x, 3 brokers of its own + PostgreSQL]', function () {
  this.timeout(600_000);
  let rig: FaultRig | undefined;
  let cleanupStore: (() => Promise<void>) | undefined;

  before(async function () {
    if (!kafkaRuntimeAvailable()) {
      if (process.env.CI === 'true') throw new Error('java and mvn are required when CI=true (the Kafka fault suite runs Apache Kafka)');
      console.log('      skipped: java or mvn is not installed (apt-get install openjdk-17-jre-headless maven)');
      this.skip();
    }
    const store = await STORE_TARGETS[1]!.prepare(this);
    cleanupStore = store.cleanup;
    rig = await startFaultRig(store);
  });

  printOutputOnFailure(() => [rig?.relay]);

  after(async function () {
    await rig?.stop();
    await cleanupStore?.();
  });

  it(`loses no acknowledged webhook when a broker is SIGKILLed during ${LOAD_SECONDS} s of ${RATE_PER_SECOND}/s, and takes it back when it restarts`, async function () {
    const drillOptions = { ...rig!, rate: RATE_PER_SECOND, seconds: LOAD_SECONDS, killAfterMs: 5_000, brokerId: 2, drainMs: 60_000 };
    const drill = await brokerKillDrill(drillOptions);
    console.log(`      ${drillLine(drill, drillOptions)}`);
    // Ingest kept answering, and only 200 (durable on 2 of 3 replicas) or 503 (not taken).
    expect(drill.answers.filter((answer) => answer.status !== 200 && answer.status !== 503).length, 'answers neither 200 nor 503').to.equal(0);
    // How many are 503 depends on how long the controller takes to fence the dead broker and the producer
    // to learn the new leaders (measured: 57 to 121 of the 300 sent after the kill); it is reported, not bounded.
    expect(percentile(drill.answers.map((answer) => answer.ms), 99), 'p99 answer ms').to.be.at.most(ANSWER_BOUND_MS);
    expect(drill.again.every((answer) => answer.status === 200), 'every webhook acknowledged once the broker is back').to.equal(true);
    // At least once: offsets a group could not commit while its coordinator was the killed broker, and a
    // consumer restarted after kafkajs gave up on that broker, are read again. Bound: one duplicate per
    // webhook acknowledged from the kill on (measured: 0 to 156 of 400 events).
    const acknowledgedAfterKill = drill.afterKill.filter((answer) => answer.status === 200).length;
    expect(drill.duplicates, 'duplicate deliveries').to.be.at.most(acknowledgedAfterKill);
    // Delivery resumes within the bound of the new leaders: a webhook acknowledged after the kill waits no
    // longer than that from its acknowledgement, or from the new leaders if it came before them (the
    // controller fences the dead broker after broker.session.timeout.ms, 3 s here).
    expect(Math.max(...drill.waitsFromNewLeaders), 'longest wait for delivery after the kill, from the acknowledgement or the new leaders, ms').to.be.at.most(RESUME_BOUND_MS);
  });

  it('answers 503 BROKER_UNAVAILABLE with Retry-After within 1 s while every broker is down, and resumes without a restart when they return', async function () {
    // Issue 54: all brokers down for 30 s.
    const downSeconds = 30;
    const { cluster, relay, sink, ingestUrl } = rig!;
    for (const node of cluster.nodes) await cluster.kill(node.id);
    const downAt = Date.now();
    const answers: Answer[] = [];
    const readyz: number[] = [];
    while (Date.now() - downAt < downSeconds * 1000) {
      const [answer, ready] = await Promise.all([send(ingestUrl, answers.length), fetch(`${relay.url}/readyz`)]);
      answers.push(answer);
      readyz.push(ready.status);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(`      all brokers down ${downSeconds} s: ${answersLine(answers)}; /readyz ${JSON.stringify(readyz)}`);

    await Promise.all(cluster.nodes.map((node) => cluster.restart(node.id)));
    const back = await waitFor('ingest acknowledging again', () => send(ingestUrl, -1), (answer) => answer.status === 200, 120_000, 500);
    console.log(`      brokers back: ingest acknowledged again ${((Date.now() - downAt) / 1000 - downSeconds).toFixed(1)} s after their restart`);
    const resumed = await steadyLoad(ingestUrl, RATE_PER_SECOND, 5);
    expect(resumed.every((answer) => answer.status === 200), `every webhook acknowledged after the return: ${answersLine(resumed)}`).to.equal(true);
    await everyAcknowledgedDelivered(sink, [back, ...resumed], 90_000);
    expect((await fetch(`${relay.url}/readyz`)).status).to.equal(200);

    expect(answers.filter((answer) => answer.status === 200), 'acknowledged with no broker up').to.deep.equal([]);
    expect(answers.filter((answer) => !(answer.status === 503 && answer.code === 'BROKER_UNAVAILABLE' && answer.retryAfter === '1')), 'answers other than 503 BROKER_UNAVAILABLE, Retry-After 1').to.deep.equal([]);
    expect(percentile(answers.map((answer) => answer.ms), 50), 'median answer ms').to.be.at.most(ANSWER_BOUND_MS);
    expect(readyz.slice(-3), '/readyz once the brokers are known down').to.deep.equal([503, 503, 503]);
  });
});
