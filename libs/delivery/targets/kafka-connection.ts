import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { KafkaTarget } from '../../destinations/queue-target.js';
import { RejectedPublishError, type QueueConnection, type QueueMessage } from './queue-connection.js';

/** Errors of a cluster that answered and refused the message (it is up; sending again later will not help). */
const REFUSED_TYPES = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED', 'MESSAGE_TOO_LARGE', 'INVALID_TOPIC_EXCEPTION', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD']);

/** The protocol error type of a kafkajs error, looking through its retry wrappers. */
function protocolType(error: unknown): string | undefined {
  for (let current = error as { type?: string; originalError?: unknown; cause?: unknown } | undefined; current; current = (current.originalError ?? current.cause) as typeof current) {
    if (typeof current.type === 'string') return current.type;
  }
  return undefined;
}

/**
 * A Kafka cluster through kafkajs: "delivered" is acks from all in-sync replicas (`acks: -1`). No topic is
 * created: an unknown topic is a refusal. The key is the source id (so one source's events keep their order
 * in a partition) or the event id.
 */
export async function connectKafka(target: KafkaTarget, timeoutMs: number): Promise<QueueConnection> {
  const kafka = new Kafka({
    clientId: 'webhook-relay-destination',
    brokers: target.brokers,
    ssl: target.ssl,
    ...(target.sasl ? { sasl: { mechanism: target.sasl.mechanism, username: target.sasl.username, password: target.sasl.password } as never } : {}),
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  });
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 1 } });
  let closed = false;
  producer.on(producer.events.DISCONNECT, () => {
    closed = true;
  });
  await producer.connect();
  return {
    get closed() {
      return closed;
    },
    async publish(message: QueueMessage, publishTimeoutMs: number) {
      try {
        const [written] = await producer.send({
          topic: target.topic,
          acks: -1,
          timeout: publishTimeoutMs,
          messages: [{ key: target.key === 'eventId' ? message.eventId : message.sourceId, value: message.body, headers: message.headers }],
        });
        return `partition ${written?.partition} offset ${written?.baseOffset}`;
      } catch (error) {
        const type = protocolType(error);
        if (type && REFUSED_TYPES.has(type)) throw new RejectedPublishError(`The cluster refused the message: ${type} (topic "${target.topic}")`);
        throw error;
      }
    },
    async close() {
      closed = true;
      await producer.disconnect().catch(() => undefined);
    },
  };
}
