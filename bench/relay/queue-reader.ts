import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import { connect as connectNats } from 'nats';
import { createClient } from 'redis';
import type { QueueType } from '../../libs/destinations/queue-target.js';

/** Where the bench's queue destination publishes, and the brokers of a Kafka one. */
export interface QueueReaderSpec {
  type: QueueType;
  kafkaBrokers?: string[];
}

/** A place of the run's own on a real server of one type, read as messages arrive. */
export interface QueueReader {
  /** The destination's `type` and `target` as the API creates it. */
  destination: { type: QueueType; target: Record<string, unknown> };
  stop(): Promise<void>;
}

/** The X-Relay-Event-Id of a message's headers, whatever the case of their names. */
function eventIdOf(headers: Iterable<[string, unknown]>): string | undefined {
  for (const [name, value] of headers) if (name.toLowerCase() === 'x-relay-event-id') return String(value);
  return undefined;
}

/**
 * Makes the run's exchange and queue, stream, subject or topic, and calls `arrived` with each message's
 * event id as the server hands it to a consumer: the queue destination's counterpart of the HTTP sink.
 */
export async function startQueueReader(spec: QueueReaderSpec, arrived: (eventId: string | undefined) => void): Promise<QueueReader> {
  const name = `bench-soak-${randomBytes(4).toString('hex')}`;
  switch (spec.type) {
    case 'rabbitmq': {
      const url = 'amqp://guest:guest@127.0.0.1:5672/%2F';
      const connection = await amqp.connect(url);
      const channel = await connection.createChannel();
      await channel.assertExchange(name, 'direct', { durable: false });
      await channel.assertQueue(name, { durable: false, autoDelete: true });
      await channel.bindQueue(name, name, 'soak');
      await channel.consume(name, (message) => message && arrived(eventIdOf(Object.entries(message.properties.headers ?? {}))), { noAck: true });
      return {
        destination: { type: 'rabbitmq', target: { url, exchange: name, routingKey: 'soak' } },
        async stop() {
          await channel.deleteExchange(name);
          await connection.close();
        },
      };
    }
    case 'nats': {
      const connection = await connectNats({ servers: 'nats://127.0.0.1:4222' });
      const manager = await connection.jetstreamManager();
      const stream = name.replace(/-/g, '_').toUpperCase();
      await manager.streams.add({ name: stream, subjects: [`${name}.events`] });
      const messages = await (await connection.jetstream().consumers.get(stream)).consume();
      const reading = (async () => {
        for await (const message of messages) arrived(eventIdOf(message.headers ?? []));
      })();
      return {
        destination: { type: 'nats', target: { url: 'nats://127.0.0.1:4222', subject: `${name}.events`, jetstream: true } },
        async stop() {
          await messages.close();
          await reading;
          await manager.streams.delete(stream);
          await connection.close();
        },
      };
    }
    case 'redis': {
      const client = createClient({ url: 'redis://127.0.0.1:6379' });
      await client.connect();
      let reading = true;
      let last = '0-0';
      const loop = (async () => {
        while (reading) {
          const batches = (await client.xRead({ key: name, id: last }, { BLOCK: 500, COUNT: 1000 })) as { messages: { id: string; message: Record<string, string> }[] }[] | null;
          for (const { messages } of batches ?? []) {
            for (const { id, message } of messages) {
              last = id;
              arrived(eventIdOf(Object.entries(JSON.parse(message.headers ?? '{}') as Record<string, unknown>)));
            }
          }
        }
      })();
      return {
        destination: { type: 'redis', target: { url: 'redis://127.0.0.1:6379', stream: name } },
        async stop() {
          reading = false;
          await loop;
          await client.del(name);
          await client.quit();
        },
      };
    }
    case 'kafka': {
      const brokers = spec.kafkaBrokers ?? [];
      const kafka = new Kafka({ clientId: 'bench-soak-reader', brokers, logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: name, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
      const consumer = kafka.consumer({ groupId: `${name}-reader`, maxWaitTimeInMs: 50 });
      await consumer.connect();
      await consumer.subscribe({ topic: name, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => arrived(eventIdOf(Object.entries(message.headers ?? {}).map(([key, value]) => [key, String(value)]))) });
      return {
        destination: { type: 'kafka', target: { brokers, topic: name, key: 'eventId' } },
        async stop() {
          await consumer.disconnect();
          await admin.deleteTopics({ topics: [name] }).catch(() => undefined);
          await admin.disconnect();
        },
      };
    }
  }
}
