/**
 * What a deliverer keeps in memory per destination it has sent to: heap and idle CPU with N destinations'
 * breakers, rate buckets and in-flight places held, and after the idle sweep that drops them (the
 * deliverer's every minute, docs/decisions/0009-per-destination-state-sweep.md).
 *
 *   node --expose-gc --import tsx bench/destinations/bench-destination-state.ts [--destinations 100000]
 *
 * Each destination gets one attempt through the deliverer's own pieces (`createCircuitBreakers`, the rate
 * limiters with a limit of 600/min, the in-flight limits); the attempt answers at once, as nothing here
 * measures HTTP. Idle CPU is this process's over 10 s with nothing to do: the breakers' timers. The
 * baseline is the same process before any destination was made.
 */
import { parseArgs } from 'node:util';
import { createCircuitBreakers } from '../../libs/delivery/circuit-breakers.js';
import { createDestinationRateLimiters } from '../../libs/delivery/token-bucket.js';
import { createInFlightLimits } from '../../apps/deliverer/in-flight-limits.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';

const { values: args } = parseArgs({ options: { destinations: { type: 'string', default: '100000' } } });
const count = Number(args.destinations);
const IDLE_SECONDS = 10;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

let clock = Date.now();
const now = () => clock;
const breakers = createCircuitBreakers({ now });
const rateLimiters = createDestinationRateLimiters();
const inFlight = createInFlightLimits({ maxInFlight: 256, maxInFlightPerDestination: 64, metrics: createRelayMetrics({ defaultMetrics: false }) });
const ok = { ok: true, statusCode: 200, latencyMs: 1, responseBody: '', responseHeaders: {} };

/** Heap in use after a full collection, and this process's CPU share over `IDLE_SECONDS` with nothing to do. */
async function measure(label: string): Promise<void> {
  gc!();
  const heapMb = process.memoryUsage().heapUsed / 1024 ** 2;
  const cpuBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const used = process.cpuUsage(cpuBefore);
  const share = (used.user + used.system) / (IDLE_SECONDS * 10_000);
  console.log(`${label}: heap ${heapMb.toFixed(0)} MB, idle CPU ${share.toFixed(1)}% of a core, breakers held ${breakers.size}`);
}

await measure('baseline, no destination');
for (let n = 0; n < count; n += 1) {
  const destinationId = `dst_${n}`;
  const release = await inFlight.acquire(destinationId);
  await rateLimiters.take(destinationId, 600, now());
  await breakers.run(destinationId, async () => ok);
  release();
}
await measure(`${count} destinations sent to once, state held`);
// A sweep after the breakers' rolling window and one bucket (65 s) has passed with nothing sent.
clock += 65_000;
const started = performance.now();
const dropped = breakers.evictIdle().length;
rateLimiters.evictIdle(now());
console.log(`idle sweep: ${dropped} breakers dropped in ${(performance.now() - started).toFixed(0)} ms`);
await measure('after the sweep');
breakers.shutdown();
