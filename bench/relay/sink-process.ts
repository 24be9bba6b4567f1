/**
 * The bench's destination, in a process of its own so that neither the relay nor the load generator
 * shares its event loop: node:http that reads each delivery and answers 200 (after `delayMs` of the
 * query, if given), counting deliveries per path and noting when each event (X-Relay-Event-Id) first
 * arrived. Given a queue spec (JSON, its first argument), it also reads a queue destination's place
 * (queue-reader.ts) and counts its messages the same way, under the path `queue:<type>`. Driven over IPC
 * (see sink-client.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SinkCommand, SinkReply } from './sink-client.js';
import { startQueueReader, type QueueReaderSpec } from './queue-reader.js';

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes of one machine. */
const now = () => performance.timeOrigin + performance.now();

let total = 0;
const perPath = new Map<string, number>();
const firstArrival = new Map<string, number>();

function count(path: string, eventId: unknown): void {
  const arrivedAt = now();
  total += 1;
  perPath.set(path, (perPath.get(path) ?? 0) + 1);
  if (typeof eventId === 'string' && !firstArrival.has(eventId)) firstArrival.set(eventId, arrivedAt);
}

const server = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const url = new URL(request.url ?? '/', 'http://sink');
    count(url.pathname, request.headers['x-relay-event-id']);
    setTimeout(() => response.writeHead(200, { 'content-length': 0 }).end(), Number(url.searchParams.get('delayMs') ?? 0));
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const queueSpec = process.argv[2] ? (JSON.parse(process.argv[2]) as QueueReaderSpec) : undefined;
const queue = queueSpec ? await startQueueReader(queueSpec, (eventId) => count(`queue:${queueSpec.type}`, eventId)) : undefined;

function answer(command: SinkCommand): SinkReply['result'] {
  switch (command.op) {
    case 'counts':
      return { total, perPath: Object.fromEntries(perPath) };
    case 'arrivals':
      return { arrivals: command.eventIds.map((eventId) => firstArrival.get(eventId) ?? null) };
    case 'reset':
      total = 0;
      perPath.clear();
      firstArrival.clear();
      return {};
  }
}

process.on('message', (command: SinkCommand | { stop: true }) => {
  if ('stop' in command) {
    server.closeAllConnections();
    void (queue?.stop() ?? Promise.resolve()).finally(() => server.close(() => process.exit(0)));
    return;
  }
  process.send!({ id: command.id, result: answer(command) } satisfies SinkReply);
});
process.send!({ ready: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, queue: queue?.destination } });
