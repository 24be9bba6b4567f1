import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import type { Context } from 'mocha';
import { connect as connectNats } from 'nats';
import { createClient } from 'redis';
import type { DestinationType } from '../destinations/queue-target.js';
import type { DestinationSettings } from './deliverer-harness.js';
import { respond, startHttpSink } from './http-sink.js';
import { kafkaClusterFor } from './kafka-target.js';

/** A message as the target's own consumer reads it back. */
export interface ReceivedMessage {
  body: string;
  /** Names lower-cased. */
  headers: Record<string, string>;
}

/**
 * One test's own place on a real server of one destination type (an exchange and queue in the suite's
 * vhost, a stream, a subject and stream, a topic, an HTTP sink), with a way to read back what arrived.
 */
export interface TargetKit {
  type: DestinationType;
  /** The real server, for a proxy (libs/testing/tcp-proxy.ts) to stand in front of. */
  server: { host: string; port: number };
  /** Settings of a destination delivering to this place, connecting to `address` (host:port) when given. */
  destination(address?: string): DestinationSettings;
  /** Settings of a destination whose server takes the connection and refuses the message. */
  refusing(): DestinationSettings;
  /** Everything that arrived so far, in order. */
  received(): Promise<ReceivedMessage[]>;
  cleanup(): Promise<void>;
}

const lowerCased = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
const unique = () => randomBytes(5).toString('hex');

async function httpKit(): Promise<TargetKit> {
  const sink = await startHttpSink();
  const failing = await startHttpSink([respond(500, { body: 'no' })]);
  const port = Number(new URL(sink.url).port);
  return {
    type: 'http',
    server: { host: '127.0.0.1', port },
    destination: (address = `127.0.0.1:${port}`) => ({ url: `http://${address}/hooks` }),
    refusing: () => ({ url: `${failing.url}/hooks` }),
    received: async () => sink.requests.map((request) => ({ body: request.body.toString('utf8'), headers: lowerCased(request.headers as Record<string, unknown>) })),
    async cleanup() {
      await sink.close();
      await failing.close();
    },
  };
}

/** A vhost for a suite of RabbitMQ tests, made with rabbitmqctl and deleted by the returned function. */
export function rabbitmqVhost(): { vhost: string; remove(): void } {
  const vhost = `relay-test-${unique()}`;
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', vhost]);
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
  return { vhost, remove: () => execFileSync('rabbitmqctl', ['-q', 'delete_vhost', vhost]) };
}

async function rabbitmqKit(vhost: string): Promise<TargetKit> {
  const url = (address: string) => `amqp://guest:guest@${address}/${encodeURIComponent(vhost)}`;
  const connection = await amqp.connect(url('127.0.0.1:5672'));
  const channel = await connection.createChannel();
  const exchange = `relay-test-${unique()}`;
  const queue = `${exchange}-queue`;
  await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
  await channel.assertQueue(queue, { durable: false });
  await channel.bindQueue(queue, exchange, 'orders');
  const received: ReceivedMessage[] = [];
  return {
    type: 'rabbitmq',
    server: { host: '127.0.0.1', port: 5672 },
    destination: (address = '127.0.0.1:5672') => ({ queue: { type: 'rabbitmq', target: { url: url(address), exchange, routingKey: 'orders' } } }),
    refusing: () => ({ queue: { type: 'rabbitmq', target: { url: url('127.0.0.1:5672'), exchange: `${exchange}-missing`, routingKey: 'orders' } } }),
    async received() {
      for (let message = await channel.get(queue, { noAck: true }); message; message = await channel.get(queue, { noAck: true })) {
        received.push({ body: message.content.toString('utf8'), headers: lowerCased(message.properties.headers ?? {}) });
      }
      return received;
    },
    async cleanup() {
      await channel.deleteQueue(queue);
      await channel.deleteExchange(exchange);
      await connection.close();
    },
  };
}

async function natsKit(): Promise<TargetKit> {
  const connection = await connectNats({ servers: 'nats://127.0.0.1:4222' });
  const manager = await connection.jetstreamManager();
  const name = `RELAY_TEST_${unique()}`;
  const subject = `relay-test.${name}`;
  await manager.streams.add({ name, subjects: [subject] });
  return {
    type: 'nats',
    server: { host: '127.0.0.1', port: 4222 },
    destination: (address = '127.0.0.1:4222') => ({ queue: { type: 'nats', target: { url: `nats://${address}`, subject, jetstream: true } } }),
    refusing: () => ({ queue: { type: 'nats', target: { url: 'nats://127.0.0.1:4222', subject: `relay-test-nostream.${name}`, jetstream: true } } }),
    async received() {
      const { state } = await manager.streams.info(name);
      const messages: ReceivedMessage[] = [];
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq += 1) {
        const stored = await manager.streams.getMessage(name, { seq });
        const headers: Record<string, string> = {};
        for (const [key, values] of stored.header ?? []) headers[key.toLowerCase()] = values.join(', ');
        messages.push({ body: Buffer.from(stored.data).toString('utf8'), headers });
      }
      return messages;
    },
    async cleanup() {
      await manager.streams.delete(name);
      await connection.close();
    },
  };
}

async function redisKit(): Promise<TargetKit> {
  const client = createClient({ url: 'redis://127.0.0.1:6379' });
  await client.connect();
  const stream = `relay-test:${unique()}`;
  const notAStream = `${stream}:string`;
  await client.set(notAStream, 'not a stream');
  return {
    type: 'redis',
    server: { host: '127.0.0.1', port: 6379 },
    destination: (address = '127.0.0.1:6379') => ({ queue: { type: 'redis', target: { url: `redis://${address}`, stream } } }),
    refusing: () => ({ queue: { type: 'redis', target: { url: 'redis://127.0.0.1:6379', stream: notAStream } } }),
    async received() {
      const entries = await client.xRange(stream, '-', '+');
      return (entries ?? []).map(({ message }) => ({ body: String(message.body), headers: lowerCased(JSON.parse(String(message.headers)) as Record<string, unknown>) }));
    },
    async cleanup() {
      await client.del([stream, notAStream]);
      await client.quit();
    },
  };
}

async function kafkaKit(mocha: Context): Promise<TargetKit> {
  const cluster = await kafkaClusterFor(mocha, { brokerCount: 1 });
  const kafka = new Kafka({ clientId: 'relay-test-kit', brokers: cluster.brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = `${cluster.prefix}relay-test-${unique()}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  const consumer = kafka.consumer({ groupId: `${topic}-reader`, ...cluster.consumer });
  const received: ReceivedMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
      received.push({ body: message.value?.toString('utf8') ?? '', headers });
    },
  });
  const [host, port] = cluster.brokers[0]!.split(':');
  return {
    type: 'kafka',
    server: { host: host!, port: Number(port) },
    destination: (address = cluster.brokers[0]!) => ({ queue: { type: 'kafka', target: { brokers: [address], topic, key: 'sourceId', ssl: false } } }),
    refusing: () => ({ queue: { type: 'kafka', target: { brokers: cluster.brokers, topic: `${topic}-missing`, key: 'sourceId', ssl: false } } }),
    received: async () => received,
    async cleanup() {
      await consumer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await cluster.cleanup();
    },
  };
}

/** A kit of `type` for one test; RabbitMQ's lives in `vhost` (the suite's, `rabbitmqVhost`). */
export function targetKit(type: DestinationType, context: { mocha: Context; vhost?: string }): Promise<TargetKit> {
  switch (type) {
    case 'http':
      return httpKit();
    case 'rabbitmq':
      return rabbitmqKit(context.vhost ?? '/');
    case 'nats':
      return natsKit();
    case 'redis':
      return redisKit();
    case 'kafka':
      return kafkaKit(context.mocha);
  }
}
