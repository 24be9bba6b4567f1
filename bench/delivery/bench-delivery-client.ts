/**
 * CPU per delivery request of the deliverer's HTTP client (`createHttpSender(...).send`: its deadline, the
 * response read capped, the outcome) beside bare undici (`Agent.request`, the body read whole) in the same
 * run, both against the bench sink in a process of its own, keep-alive, 1 KB JSON bodies, `--concurrency`
 * requests in flight. Only this process's CPU is counted (process.cpuUsage), so the sink's is not. The
 * difference is what the client adds to each attempt beyond undici's own work; it runs on the pipeline
 * thread, the relay's busiest (docs/performance.md).
 *
 * Run: node --import tsx bench/delivery/bench-delivery-client.ts [--requests 20000] [--concurrency 16] [--rounds 4]
 */
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { nearestRank } from '../../libs/stats/nearest-rank.js';
import { startBenchSink } from '../relay/sink-client.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '4' },
  },
});
const requests = Number(args.requests);
const concurrency = Number(args.concurrency);
const rounds = Number(args.rounds);

const sink = await startBenchSink();
const url = new URL('/bench-delivery-client', sink.url);
const body = Buffer.from(JSON.stringify({ padding: 'x'.repeat(1000) }));
const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_bench', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,bench' };
const sender = createHttpSender({ blockPrivateDestinations: false });
const agent = new Agent({ connections: 64, keepAliveTimeout: 4_000 });

const lines = {
  'bare undici': async () => {
    const response = await agent.request({ origin: url.origin, path: url.pathname, method: 'POST', headers, body });
    await response.body.arrayBuffer();
    if (response.statusCode !== 200) throw new Error(`the sink answered ${response.statusCode}`);
  },
  'createHttpSender': async () => {
    const outcome = await sender.send({ url: url.href, method: 'POST', headers, body }, { timeoutMs: 30_000 });
    if (!outcome.ok) throw new Error(`the attempt failed: ${outcome.error}`);
  },
};

/** Microseconds of this process's CPU per request, `requests` sent with `concurrency` in flight. */
async function cpuPerRequest(send: () => Promise<void>): Promise<number> {
  const started = process.cpuUsage();
  let sent = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (sent++ < requests) await send();
  }));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / requests;
}

const figures = new Map<string, number[]>(Object.keys(lines).map((name) => [name, []]));
// The first round warms both up (connections, V8's compiled code) and is left out.
for (let round = 0; round <= rounds; round++) {
  for (const [name, send] of Object.entries(lines)) {
    const us = await cpuPerRequest(send);
    if (round > 0) figures.get(name)!.push(us);
  }
}
const median = (values: number[]) => nearestRank([...values].sort((a, b) => a - b), 50);
console.log(`delivery client, ${requests} requests a round, ${concurrency} in flight, ${rounds} rounds (after one to warm up), CPU of this process per request:`);
for (const [name, values] of figures) {
  console.log(`  ${name.padEnd(17)} median ${median(values).toFixed(1)} us (${values.map((value) => value.toFixed(1)).join(', ')})`);
}
const added = median(figures.get('createHttpSender')!) - median(figures.get('bare undici')!);
console.log(`createHttpSender adds ${added.toFixed(1)} us a request to bare undici's`);
await sender.close();
await agent.close();
await sink.stop();
