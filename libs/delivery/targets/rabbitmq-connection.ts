import amqp, { type ConfirmChannel } from 'amqplib';
import type { RabbitmqTarget } from '../../destinations/queue-target.js';
import { RejectedPublishError, type QueueConnection, type QueueMessage } from './queue-connection.js';

/**
 * RabbitMQ through amqplib: a confirm channel, so "delivered" is the broker's publisher confirm. Messages
 * are persistent and mandatory: one no queue takes comes back (basic.return, before its confirm) and is
 * refused rather than dropped in silence. A channel the broker closed (an unknown exchange) is opened again.
 */
export async function connectRabbitmq(target: RabbitmqTarget, timeoutMs: number): Promise<QueueConnection> {
  const connection = await amqp.connect(target.url, { timeout: timeoutMs });
  let closed = false;
  // A lost connection fails the publishes waiting on it; the event itself needs no handling beyond that.
  connection.on('error', () => undefined);
  connection.on('close', () => {
    closed = true;
  });
  const returned = new Set<string>();
  let channel: Promise<{ channel: ConfirmChannel; closedBy: Promise<never> }> | null = null;

  function openChannel() {
    channel ??= connection.createConfirmChannel().then((opened) => {
      let lastError: unknown;
      opened.on('error', (error: unknown) => {
        lastError = error;
      });
      opened.on('return', (message: amqp.Message) => returned.add(String(message.properties.messageId)));
      const closedBy = new Promise<never>((_, reject) => {
        opened.on('close', () => {
          channel = null;
          reject(lastError instanceof Error ? new RejectedPublishError(lastError.message) : new Error('The RabbitMQ channel closed'));
        });
      });
      closedBy.catch(() => undefined);
      return { channel: opened, closedBy };
    });
    return channel;
  }

  return {
    get closed() {
      return closed;
    },
    async publish(message: QueueMessage) {
      const { channel: open, closedBy } = await openChannel();
      const confirmed = new Promise<string>((resolve, reject) => {
        open.publish(
          target.exchange,
          target.routingKey,
          message.body,
          { headers: message.headers, contentType: message.headers['content-type'], messageId: message.messageId, persistent: true, mandatory: true },
          (error: unknown) => {
            if (error) return reject(new RejectedPublishError('The broker refused the message (nack)'));
            if (returned.delete(message.messageId)) return reject(new RejectedPublishError(`No queue is bound to exchange "${target.exchange}" for routing key "${target.routingKey}"`));
            resolve('confirmed');
          },
        );
      });
      return Promise.race([confirmed, closedBy]);
    },
    async close() {
      closed = true;
      await connection.close().catch(() => undefined);
    },
  };
}
