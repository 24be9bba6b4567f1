/**
 * One Kafka hop's latency by fetch wait (`KAFKA_MAX_WAIT_MS`): does a broker answer a fetch as soon as
 * records arrive, or hold it for the whole wait? On the cluster of `npm run kafka:up` in this checkout
 * (or `KAFKA_BROKERS`; topics under a prefix of the run's own, deleted after), through the relay's own
 * adapter: a producer sends one 1 KB record at a time at `--rate` a second to a topic of 8 partitions; a
 * consumer group reads it; each record's latency is from the send to its handler. Per wait: p50, p99 and
 * max, and a floor line (the same sends, acknowledged, nothing read) for scale on a loaded machine.
 *
 *   node --import tsx bench/broker/bench-kafka-fetch-wait.ts [--waits 500,100,50] [--rate 200] [--seconds 15]
 */
import { parseArgs } from 'node:util';
import type { Broker } from '../../libs/broker/broker.js';
import { connectKafkaBroker } from '../../libs/broker/kafka/kafka-broker.js';
import { silentLogger } from '../../libs/broker/silent-logger.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { onRealKafka, realKafkaBrokers } from '../../libs/testing/kafka-target.js';
import { waitFor } from '../../libs/testing/wait-for.js';

const { values: args } = parseArgs({
  options: {
    waits: { type: 'string', default: '500,100,50' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '15' },
  },
});
const rate = Number(args.rate);
const seconds = Number(args.seconds);
const PARTITIONS = 8;
const VALUE = Buffer.alloc(1024, 7);

const brokers = realKafkaBrokers();
if (!brokers) throw new Error('no Kafka cluster: run `npm run kafka:up` (or set KAFKA_BROKERS)');
const cluster = onRealKafka(brokers);
const ms = (values: number[]) => `p50 ${nearestRank(values, 50).toFixed(1)} ms p99 ${nearestRank(values, 99).toFixed(1)} ms max ${(values.at(-1) ?? 0).toFixed(1)} ms`;

/** Sends `rate` records a second for `seconds`, one send each, on schedule; answers each send's acknowledgement time. */
async function pacedSends(broker: Broker, topic: string, sentAt: Map<string, number>): Promise<number[]> {
  const producer = broker.producer();
  const acks: Promise<number>[] = [];
  const startedAt = performance.now();
  for (let n = 0; n < rate * seconds; n += 1) {
    const wait = startedAt + (n * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const at = performance.now();
    sentAt.set(String(n), at);
    acks.push(producer.send(topic, [{ key: `k${n % 64}`, value: VALUE, headers: { n: String(n) } }]).then(() => performance.now() - at));
  }
  return (await Promise.all(acks)).sort((a, b) => a - b);
}

async function hopAt(maxWaitTimeInMs: number): Promise<void> {
  const broker = await connectKafkaBroker({ brokers: cluster.brokers, topicPrefix: cluster.prefix, logger: silentLogger, maxWaitTimeInMs, sessionTimeoutMs: 6_000 });
  const topic = `bench.wait${maxWaitTimeInMs}`;
  try {
    await broker.admin().ensureTopics([{ topic, partitions: PARTITIONS }]);
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const consumer = broker.consumer({
      groupId: `bench-wait-${maxWaitTimeInMs}`,
      topics: [topic],
      handleBatch: async (batch) => {
        const now = performance.now();
        for (const record of batch.records) latencies.push(now - sentAt.get(record.headers.n!)!);
      },
    });
    await consumer.start();
    // Joined and fetching: a first record arrives before the measured ones are sent.
    await broker.producer().send(topic, [{ key: 'warm', value: VALUE, headers: { n: 'warm' } }]);
    sentAt.set('warm', performance.now());
    await waitFor('the warm-up record read', () => latencies.length, (count) => count > 0, 120_000, 50);
    latencies.length = 0;
    const acks = await pacedSends(broker, topic, sentAt);
    await waitFor(`all ${rate * seconds} records read`, () => latencies.length, (count) => count >= rate * seconds, 120_000, 50);
    await consumer.stop();
    latencies.sort((a, b) => a - b);
    console.log(`KAFKA_MAX_WAIT_MS=${String(maxWaitTimeInMs).padStart(4)}: send -> handler ${ms(latencies)}; the sends' acknowledgement (floor) ${ms(acks)}`);
  } finally {
    await broker.close();
  }
}

console.log(`Kafka hop latency by fetch wait: ${brokers.length} broker(s) at ${brokers.join(',')}, ${rate}/s for ${seconds} s, 1 KB records, ${PARTITIONS} partitions; ${new Date().toISOString()}`);
try {
  for (const wait of args.waits.split(',').map(Number)) await hopAt(wait);
} finally {
  await cluster.cleanup();
}
