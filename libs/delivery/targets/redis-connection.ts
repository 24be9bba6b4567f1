import { createClient, ErrorReply } from 'redis';
import type { RedisTarget } from '../../destinations/queue-target.js';
import { RejectedPublishError, type QueueConnection, type QueueMessage } from './queue-connection.js';

/**
 * Redis Streams through `redis`: one `XADD` per attempt, fields `body` and `headers` (JSON), "delivered"
 * when it returns the entry id. No reconnecting and no offline queue: a lost server fails the attempt
 * at once, and the next one connects again.
 */
export async function connectRedis(target: RedisTarget, timeoutMs: number): Promise<QueueConnection> {
  const client = createClient({ url: target.url, disableOfflineQueue: true, socket: { connectTimeout: timeoutMs, reconnectStrategy: false } });
  // A lost connection fails the command waiting on it; the event itself needs no handling beyond that.
  client.on('error', () => undefined);
  await client.connect();
  const trim = target.maxLen === undefined ? undefined : { TRIM: { strategy: 'MAXLEN' as const, strategyModifier: '~' as const, threshold: target.maxLen } };
  return {
    get closed() {
      return !client.isReady;
    },
    async publish(message: QueueMessage) {
      try {
        return await client.xAdd(target.stream, '*', { body: message.body.toString('utf8'), headers: JSON.stringify(message.headers) }, trim);
      } catch (error) {
        // An error reply (WRONGTYPE, OOM, a refused command) is the server's refusal; anything else, a lost connection.
        if (error instanceof ErrorReply) throw new RejectedPublishError(error.message);
        throw error;
      }
    },
    async close() {
      if (client.isOpen) await client.quit().catch(() => client.destroy());
    },
  };
}
