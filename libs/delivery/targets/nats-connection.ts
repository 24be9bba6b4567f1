import { connect, ErrorCode, headers as natsHeaders, NatsError } from 'nats';
import type { NatsTarget } from '../../destinations/queue-target.js';
import { RejectedPublishError, type QueueConnection, type QueueMessage } from './queue-connection.js';

/** Codes of a server that answered and refused: no stream takes the subject, or the stream refused it. */
const REFUSALS = new Set<string>([ErrorCode.NoResponders, ErrorCode.JetStream404NoMessages, ErrorCode.JetStreamInvalidAck, ErrorCode.PermissionsViolation]);

/**
 * NATS through `nats`: with `jetstream` (the default) "delivered" is the stream's acknowledgement, and
 * the message id (`Nats-Msg-Id`) lets the stream drop a duplicate; without, it is the server's answer to
 * a flush after the publish, with no guarantee beyond it. No reconnecting: the next attempt connects again.
 */
export async function connectNats(target: NatsTarget, timeoutMs: number): Promise<QueueConnection> {
  const connection = await connect({ servers: target.url, timeout: timeoutMs, reconnect: false });
  const jetstream = connection.jetstream();
  return {
    get closed() {
      return connection.isClosed();
    },
    async publish(message: QueueMessage, publishTimeoutMs: number) {
      const headers = natsHeaders();
      for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
      try {
        if (target.jetstream) {
          const ack = await jetstream.publish(target.subject, message.body, { headers, msgID: message.messageId, timeout: publishTimeoutMs });
          return `${ack.stream} seq ${ack.seq}${ack.duplicate ? ' (duplicate)' : ''}`;
        }
        connection.publish(target.subject, message.body, { headers });
        await connection.flush();
        return 'flushed';
      } catch (error) {
        if (error instanceof NatsError && (REFUSALS.has(error.code) || error.isJetStreamError())) throw new RejectedPublishError(noResponders(error) ? `No JetStream stream takes subject "${target.subject}"` : error.message);
        throw error;
      }
    },
    async close() {
      await connection.close().catch(() => undefined);
    },
  };
}

const noResponders = (error: NatsError) => error.code === ErrorCode.NoResponders;
