import { RelayError } from '../../errors/errors.js';
import { backoffDelay } from '../../time/backoff.js';
import { BrokerRequestError, BrokerUnavailableError, MessageTooLargeError } from '../errors.js';

interface KafkaJsErrorShape {
  name?: string;
  type?: string;
  message?: string;
  retriable?: boolean;
  cause?: unknown;
}

const UNAVAILABLE_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSTimeout',
]);

/**
 * The broker's answers that the producer's idempotence state (its producer id and sequence numbers) no
 * longer matches the partition's: kafkajs never starts that state again, so every later send of the same
 * client fails alike (seen after a broker's SIGKILL on Kafka 4.4.0: OUT_OF_ORDER_SEQUENCE_NUMBER until the
 * process restarted). The record was not written; a fresh client (a new producer id) can send it.
 */
const PRODUCER_STATE_LOST = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH', 'INVALID_PRODUCER_ID_MAPPING']);

/** Whether a kafkajs send failed because its producer's idempotence state is lost (PRODUCER_STATE_LOST). */
export function lostProducerState(error: unknown): boolean {
  return chain(error).some((e) => PRODUCER_STATE_LOST.has(e.type ?? ''));
}

/** kafkajs wraps the broker's answer in retry errors; the innermost error names what happened. */
function chain(error: unknown): KafkaJsErrorShape[] {
  const errors: KafkaJsErrorShape[] = [];
  let current: unknown = error;
  while (current && typeof current === 'object' && errors.length < 10) {
    errors.push(current as KafkaJsErrorShape);
    current = (current as KafkaJsErrorShape).cause;
  }
  return errors;
}

/** Classifies a kafkajs failure as one of the broker error classes. */
export function toBrokerError(error: unknown, what: string, topic?: string): RelayError {
  if (error instanceof RelayError) return error;
  const errors = chain(error);
  const message = `${what}: ${errors.at(-1)?.message ?? String(error)}`;
  if (errors.some((e) => e.type === 'MESSAGE_TOO_LARGE')) return new MessageTooLargeError(topic ?? 'unknown', undefined, undefined, error);
  // A lost producer state is retriable too: the producer sends on with a fresh client.
  if (errors.some((e) => e.retriable === true || UNAVAILABLE_NAMES.has(e.name ?? '') || PRODUCER_STATE_LOST.has(e.type ?? ''))) return new BrokerUnavailableError(message, error);
  return new BrokerRequestError(message, error);
}

/**
 * Runs `attempt` again while it fails with a retriable error, for up to `waitMs` (then its error stands).
 * For requests about a topic just created: the broker that created it knows it first, the others a little
 * later (200 ms on a loaded machine), and answer UNKNOWN_TOPIC_OR_PARTITION meanwhile, which kafkajs'
 * subscribe, ListOffsets and waitForLeaders do not retry.
 */
export async function whileTopicsSettle<T>(attempt: () => Promise<T>, waitMs = 15_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let failures = 1; ; failures += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline || !toBrokerError(error, 'Kafka request').retriable) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffDelay({ initialMs: 50, maxMs: 1_000 }, failures)));
    }
  }
}
