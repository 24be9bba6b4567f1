import type { QueueTarget } from '../../destinations/queue-target.js';

/** One attempt's message as a queue target receives it: the HTTP body and headers, and ids for the key. */
export interface QueueMessage {
  body: Buffer;
  headers: Record<string, string>;
  /** Unique per attempt: a broker's deduplication id (JetStream `Nats-Msg-Id`, AMQP `messageId`). */
  messageId: string;
  eventId: string;
  sourceId: string;
}

/** A connection to one destination's target, kept between attempts. */
export interface QueueConnection {
  /** Resolves once the target acknowledged (what "delivered" means for its type) with what it said, e.g. an entry id. */
  publish(message: QueueMessage, timeoutMs: number): Promise<string>;
  /** True once the connection is lost: the next attempt connects again. */
  readonly closed: boolean;
  close(): Promise<void>;
}

export type QueueConnector<T extends QueueTarget = QueueTarget> = (target: T['target'], timeoutMs: number) => Promise<QueueConnection>;

/**
 * The target took the connection but refused the message: a nack, an unknown exchange, subject or stream,
 * a wrong key type. Recorded as `errorKind: "rejected"` (issue kind `rejected`); the server is up.
 */
export class RejectedPublishError extends Error {
  override readonly name = 'RejectedPublishError';
}
