/**
 * Counts a relay process's Kafka requests by API (Produce, Fetch, OffsetCommit, Heartbeat, ...), for
 * `bench-soak.ts --kafka`: loaded into the compiled relay with `--import`, it wraps kafkajs' one way to
 * the wire (`Connection#send`) and writes the running counts to `$BENCH_KAFKA_REQUESTS_FILE.<thread id>`
 * four times a second (the pipeline threads load it too, each with kafkajs clients of its own), so the
 * bench can take the difference over one rate's load and drain. kafkajs' own instrumentation events would
 * need a listener on every client the relay makes; this sees them all.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { threadId } from 'node:worker_threads';

interface KafkaRequest {
  apiName: string;
}

export type KafkaRequestCounts = Record<string, number>;

/** The counts the threads of a relay process last wrote, summed (empty before their first write). */
export function readKafkaRequestCounts(file: string): KafkaRequestCounts {
  const total: KafkaRequestCounts = {};
  const prefix = `${path.basename(file)}.`;
  for (const name of fs.readdirSync(path.dirname(file)).filter((entry) => entry.startsWith(prefix))) {
    let counts: KafkaRequestCounts;
    try {
      counts = JSON.parse(fs.readFileSync(path.join(path.dirname(file), name), 'utf8')) as KafkaRequestCounts;
    } catch {
      continue; // caught mid-write: its next write comes within 250 ms
    }
    for (const [api, count] of Object.entries(counts)) total[api] = (total[api] ?? 0) + count;
  }
  return total;
}

const file = process.env.BENCH_KAFKA_REQUESTS_FILE;
if (file) {
  const require = createRequire(import.meta.url);
  const { prototype } = require('kafkajs/src/network/connection.js') as { prototype: { send(this: unknown, call: { request: KafkaRequest }): Promise<unknown> } };
  const counts: KafkaRequestCounts = {};
  const count = (name: string) => (counts[name] = (counts[name] ?? 0) + 1);
  const send = prototype.send;
  prototype.send = function (this: unknown, call) {
    count(call.request.apiName);
    return send.call(this, call);
  };
  // Fetches (one per broker leading assigned partitions) and commits by consumer group, as `<group> <call>`.
  type Group = { groupId: string };
  const group = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: Record<'fetch' | 'commitOffsets', (this: Group, ...args: unknown[]) => Promise<unknown>> };
  for (const call of ['fetch', 'commitOffsets'] as const) {
    const original = group.prototype[call];
    group.prototype[call] = function (this: Group, ...args: unknown[]) {
      count(`${this.groupId} ${call}`);
      return original.apply(this, args);
    };
  }
  const write = () => fs.writeFileSync(`${file}.${threadId}`, JSON.stringify(counts));
  setInterval(write, 250).unref();
  process.on('exit', write);
}
