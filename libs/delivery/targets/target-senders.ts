import { performance } from 'node:perf_hooks';
import type { QueueTarget, QueueType } from '../../destinations/queue-target.js';
import { targetAddresses } from '../../destinations/queue-target.js';
import { PrivateDestinationError } from '../../errors/errors.js';
import { TimedOutError, within } from '../../time/within.js';
import type { CheckTarget } from '../allowed-target.js';
import type { AttemptErrorKind, AttemptOutcome } from '../attempt-outcome.js';
import type { DeliveryTarget } from '../delivery-lookup.js';
import type { TargetSender } from '../target-port.js';
import { connectKafka } from './kafka-connection.js';
import { connectNats } from './nats-connection.js';
import { RejectedPublishError, type QueueConnection, type QueueConnector } from './queue-connection.js';
import { connectRabbitmq } from './rabbitmq-connection.js';
import { connectRedis } from './redis-connection.js';

const CONNECTORS: { [T in QueueType]: QueueConnector<Extract<QueueTarget, { type: T }>> } = {
  rabbitmq: connectRabbitmq,
  nats: connectNats,
  kafka: connectKafka,
  redis: connectRedis,
};

/** A connection kept for an idle minute by default, then closed (a busy destination keeps its own). */
export const QUEUE_IDLE_CLOSE_MS = 60_000;

/** How long closing a connection may take before it is left to the server's own time-out. */
const CLOSE_WAIT_MS = 5_000;

export interface TargetSendersOptions {
  /** HTTP destinations' sender (`httpTargetSender`). */
  http: TargetSender;
  /** The private-destination policy, judged again before each connection (`createTargetCheck`). */
  checkTarget: CheckTarget;
  idleCloseMs?: number;
}

interface Pooled {
  /** The target it was made for: a changed target connects afresh. */
  key: string;
  connection: Promise<QueueConnection>;
  lastUsedAt: number;
}

/**
 * The target port for every type: HTTP destinations go to `http`, queue destinations to one connection per
 * destination, made on its first attempt and kept while it is used. A failure to connect or a lost
 * connection drops it (the next attempt connects again); a refusal keeps it.
 */
export function createTargetSenders(options: TargetSendersOptions): TargetSender {
  const pool = new Map<string, Pooled>();
  const idleCloseMs = options.idleCloseMs ?? QUEUE_IDLE_CLOSE_MS;
  const drop = async (destinationId: string, pooled?: Pooled) => {
    const current = pool.get(destinationId);
    if (!current || (pooled && current !== pooled)) return;
    pool.delete(destinationId);
    // Bounded: a server that stopped answering must not hold up a stop or a config change.
    await within(CLOSE_WAIT_MS, current.connection.then((connection) => connection.close()), 'Closing a queue connection').catch(() => undefined);
  };
  const sweep = setInterval(() => {
    const idleSince = performance.now() - idleCloseMs;
    for (const [destinationId, pooled] of pool) if (pooled.lastUsedAt < idleSince) void drop(destinationId, pooled);
  }, Math.max(1_000, idleCloseMs / 2));
  sweep.unref();

  async function connectionFor(target: DeliveryTarget, queue: QueueTarget): Promise<Pooled> {
    const key = JSON.stringify(queue);
    const current = pool.get(target.id);
    if (current && current.key === key && !(await current.connection.then((connection) => connection.closed).catch(() => true))) return current;
    if (current) await drop(target.id, current);
    for (const { address, field } of targetAddresses(queue)) await options.checkTarget(address, field);
    const connect = CONNECTORS[queue.type] as QueueConnector;
    const pooled: Pooled = { key, connection: connect(queue.target, target.timeoutMs), lastUsedAt: performance.now() };
    pooled.connection.catch(() => undefined);
    pool.set(target.id, pooled);
    return pooled;
  }

  async function publish(request: Parameters<TargetSender['send']>[0], target: DeliveryTarget, queue: QueueTarget, context: Parameters<TargetSender['send']>[2]): Promise<AttemptOutcome> {
    const startedAt = performance.now();
    const deadline = startedAt + target.timeoutMs;
    let phase: 'connect' | 'publish' = 'connect';
    let pooled: Pooled | undefined;
    try {
      pooled = await connectionFor(target, queue);
      const connection = await within(target.timeoutMs, pooled.connection, `Connecting to the ${queue.type} target`);
      phase = 'publish';
      const left = Math.max(1, deadline - performance.now());
      const message = { body: request.body, headers: request.headers, messageId: `${context.deliveryId}-${context.attemptNumber}`, eventId: context.eventId, sourceId: context.sourceId };
      const answer = await within(left, connection.publish(message, left), `The ${queue.type} acknowledgement`);
      pooled.lastUsedAt = performance.now();
      return { ok: true, statusCode: null, latencyMs: Math.round(performance.now() - startedAt), responseBody: answer, responseHeaders: {} };
    } catch (error) {
      const errorKind = kindOf(error, phase);
      // Not awaited: the attempt's outcome does not wait for a lost connection to close.
      if (errorKind !== 'rejected' && pooled) void drop(target.id, pooled);
      return { ok: false, statusCode: null, latencyMs: Math.round(performance.now() - startedAt), responseBody: '', responseHeaders: {}, errorKind, error: messageOf(error, errorKind, queue.type, target.timeoutMs) };
    }
  }

  return {
    send(request, target, context) {
      return target.queue ? publish(request, target, target.queue, context) : options.http.send(request, target, context);
    },
    forget: (destinationId) => drop(destinationId),
    async close() {
      clearInterval(sweep);
      await Promise.all([...pool.keys()].map((destinationId) => drop(destinationId)));
      await options.http.close();
    },
  };
}

function kindOf(error: unknown, phase: 'connect' | 'publish'): AttemptErrorKind {
  if (error instanceof RejectedPublishError) return 'rejected';
  if (error instanceof PrivateDestinationError) return 'refused_address';
  if (error instanceof TimedOutError) return 'timeout';
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  return phase === 'connect' ? 'connect' : 'reset';
}

/** What the attempt records: the target's own refusal as it said it; a connection error by kind only, naming no resolved address. */
function messageOf(error: unknown, kind: AttemptErrorKind, type: QueueType, timeoutMs: number): string {
  switch (kind) {
    case 'rejected':
    case 'refused_address':
      return (error as Error).message;
    case 'timeout':
      return `The ${type} target did not acknowledge within ${timeoutMs} ms`;
    case 'dns':
      return `The ${type} target's host name did not resolve`;
    case 'connect':
      return `Could not connect to the ${type} target${codeOf(error)}`;
    default:
      return `The connection to the ${type} target was lost${codeOf(error)}`;
  }
}

const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? ` (${code})` : '';
};
