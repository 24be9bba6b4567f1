/**
 * CPU per webhook of the relay's tracing alone: the spans one delivered webhook makes (ingest, route,
 * attempt, recorder write) with their record headers, with export off (the default) and with export on
 * to a local OTLP/HTTP receiver. Run: npx tsx bench/tracing/bench-span-cost.ts
 */
import { startOtlpReceiver } from '../../libs/testing/otlp-receiver.js';
import { withTraceparent, recordTraceparent } from '../../libs/tracing/record-trace.js';
import { createRelayTracer, traceparentOf, type RelayTracer } from '../../libs/tracing/relay-tracer.js';

const WEBHOOKS = 20_000;

function oneWebhook(tracer: RelayTracer, sender: string | undefined): void {
  const ingest = tracer.start('ingest', sender, { attributes: { 'relay.source': 'shop' } });
  const record = { headers: withTraceparent({ key: null, value: Buffer.alloc(0) }, ingest).headers! } as Parameters<typeof recordTraceparent>[0];
  ingest.end();
  const route = tracer.start('route', recordTraceparent(record));
  const attempt = tracer.start('attempt', traceparentOf(route), { attributes: { 'relay.destination_id': 'dst_1' } });
  route.end();
  attempt.setAttribute('http.response.status_code', 200).end();
  tracer.start('record attempt', traceparentOf(attempt)).end();
}

async function cpuPerWebhookUs(tracer: RelayTracer): Promise<number> {
  for (let i = 0; i < 2_000; i += 1) oneWebhook(tracer, undefined);
  const started = process.cpuUsage();
  for (let i = 0; i < WEBHOOKS; i += 1) oneWebhook(tracer, i % 2 === 0 ? '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' : undefined);
  await tracer.close();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / WEBHOOKS;
}

const receiver = await startOtlpReceiver();
const off = await cpuPerWebhookUs(createRelayTracer({ serviceName: 'bench', sampleRatio: 1 }));
const on = await cpuPerWebhookUs(createRelayTracer({ serviceName: 'bench', sampleRatio: 1, tracesEndpoint: `${receiver.url}/v1/traces` }));
await receiver.close();
console.log(`tracing CPU per webhook (4 spans): export off ${off.toFixed(1)} µs, export on ${on.toFixed(1)} µs (${receiver.spans().length} spans received)`);
