/**
 * Embedded broker figures: produce throughput (1 KB values, fsync normal and full) and produce-to-consume
 * latency at a paced rate, and the CPU a record costs appended, and appended and read back. Targets: >= 50,000 msgs/s appended; p99 < 5 ms at 5,000 msgs/s.
 * Run: node --import tsx bench/broker/bench-broker.ts [dataDir]   (default: a fresh directory in the OS temp dir)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Broker, OutgoingMessage } from '../../libs/broker/broker.js';
import { openEmbeddedBroker } from '../../libs/broker/embedded/embedded-broker.js';
import type { FsyncMode } from '../../libs/broker/embedded/log-store.js';

const VALUE_BYTES = 1024;
const THROUGHPUT_MESSAGES = 200_000;
const IN_FLIGHT_SENDS = 1_000;
const PACED_RATE = 5_000;
const PACED_SECONDS = 10;

const baseDir = process.argv[2] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'relay-bench-broker-'));

function open(name: string, fsync: FsyncMode): Broker {
  const dataDir = path.join(baseDir, name);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return openEmbeddedBroker({ dataDir, fsync });
}

function message(i: number): OutgoingMessage {
  const value = Buffer.alloc(VALUE_BYTES, i % 251);
  return { key: `src_${i % 64}`, value, headers: { 'x-relay-event-id': `evt_${i}` } };
}

/** Single-message sends with `IN_FLIGHT_SENDS` outstanding, as concurrent ingest requests produce. */
async function concurrentSingleSends(broker: Broker): Promise<number> {
  const producer = broker.producer();
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < THROUGHPUT_MESSAGES) await producer.send('bench.single', [message(next++)]);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT_SENDS }, lane));
  return THROUGHPUT_MESSAGES / ((performance.now() - start) / 1000);
}

/** Sends of 100 messages each, 10 outstanding, as a router publishing a consumed batch does. */
async function batchedSends(broker: Broker): Promise<number> {
  const producer = broker.producer();
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < THROUGHPUT_MESSAGES) {
      const batch = Array.from({ length: 100 }, () => message(next++));
      await producer.send('bench.batched', batch);
    }
  };
  await Promise.all(Array.from({ length: 10 }, lane));
  return THROUGHPUT_MESSAGES / ((performance.now() - start) / 1000);
}

/**
 * CPU a record costs when sent in sends of 20 (as the pipeline's batches are) and, with `consumed`, also
 * read back by a group that keeps up: the log's reads beside its appends.
 */
async function cpuPerRecord(broker: Broker, topic: string, consumed: boolean): Promise<number> {
  await broker.admin().ensureTopics([{ topic, partitions: 8 }]);
  let read = 0;
  let allRead = () => {};
  const caughtUp = new Promise<void>((resolve) => (allRead = resolve));
  const consumer = consumed
    ? broker.consumer({
        groupId: 'bench-cpu',
        topics: [topic],
        handleBatch: async (batch) => {
          read += batch.records.length;
          if (read >= THROUGHPUT_MESSAGES) allRead();
        },
      })
    : undefined;
  await consumer?.start();
  const producer = broker.producer();
  const start = process.cpuUsage();
  for (let next = 0; next < THROUGHPUT_MESSAGES; next += 20) {
    await producer.send(topic, Array.from({ length: 20 }, (_, index) => message(next + index)));
  }
  if (consumer) await caughtUp;
  const used = process.cpuUsage(start);
  await consumer?.stop();
  return (used.user + used.system) / THROUGHPUT_MESSAGES;
}

interface Latency {
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** p99 of the event loop's own delay during the run: what CPU contention alone adds. */
  loopDelayP99: number;
}

/** Sends `PACED_RATE` single-message sends per second and measures send-to-handler time per message. */
async function pacedLatency(broker: Broker): Promise<Latency> {
  const latencies: number[] = [];
  const total = PACED_RATE * PACED_SECONDS;
  const consumer = broker.consumer({
    groupId: 'bench',
    topics: ['bench.latency'],
    handleBatch: async (batch) => {
      const now = performance.now();
      for (const record of batch.records) latencies.push(now - record.value.readDoubleLE(0));
    },
  });
  await broker.admin().ensureTopics([{ topic: 'bench.latency', partitions: 4 }]);
  await consumer.start();
  const producer = broker.producer();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve, reject) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * PACED_RATE));
      for (; sent < due; sent++) {
        const value = Buffer.alloc(VALUE_BYTES);
        value.writeDoubleLE(performance.now(), 0);
        producer.send('bench.latency', [{ key: `src_${sent % 64}`, value }]).catch(reject);
      }
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  while (latencies.length < total) await new Promise((resolve) => setTimeout(resolve, 10));
  loopDelay.disable();
  await consumer.stop();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    count: latencies.length,
    p50: at(0.5),
    p99: at(0.99),
    max: latencies.at(-1)!,
    // The histogram counts from its 1 ms sampling timer, so subtract that period.
    loopDelayP99: Math.max(0, loopDelay.percentile(99) / 1e6 - 1),
  };
}

function rate(value: number): string {
  return `${Math.round(value).toLocaleString('en-US')} msgs/s`;
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

const load = os.loadavg().map((value) => value.toFixed(2)).join(' ');
console.log(`embedded broker bench (data in ${baseDir}, ${os.cpus().length} CPUs, load average ${load}, 1 KB values)`);
for (const fsync of ['normal', 'full'] as const) {
  const broker = open(`throughput-${fsync}`, fsync);
  const single = await concurrentSingleSends(broker);
  const batched = await batchedSends(broker);
  await broker.close();
  console.log(`produce, fsync=${fsync}: ${rate(single)} (single-message sends, ${IN_FLIGHT_SENDS} in flight); ${rate(batched)} (sends of 100)`);
}
{
  const broker = open('cpu', 'normal');
  const produced = await cpuPerRecord(broker, 'bench.produced', false);
  const consumed = await cpuPerRecord(broker, 'bench.consumed', true);
  await broker.close();
  console.log(`CPU a record, sends of 20, fsync=normal: ${produced.toFixed(1)} us appended; ${consumed.toFixed(1)} us appended and read back by a group`);
}
for (const fsync of ['normal', 'full'] as const) {
  const broker = open(`latency-${fsync}`, fsync);
  const latency = await pacedLatency(broker);
  await broker.close();
  console.log(
    `produce-to-consume at ${PACED_RATE.toLocaleString('en-US')} msgs/s for ${PACED_SECONDS} s, fsync=${fsync}: ` +
      `p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)}, max ${ms(latency.max)} (${latency.count} messages; ` +
      `event-loop delay p99 ${ms(latency.loopDelayP99)})`,
  );
}
if (process.argv[2] === undefined) fs.rmSync(baseDir, { recursive: true, force: true });
