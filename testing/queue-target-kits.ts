import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import type { Context } from 'mocha';
import { connect as connectNats } from 'nats';
import { createClient } from 'redis';
import type { DestinationType } from '../libs/destinations/queue-target.js';
import type { DestinationSettings } from './deliverer-harness.js';
import { respond, startHttpSink } from '../libs/testing/http-sink.js';
import { kcatAvailable, startKafkaMock } from '../libs/testing/kafka-mock.js';
import { kafkaClusterToFault, realKafkaBrokers, type KafkaClusterToFault } from '../libs/testing/kafka-target.js';
import { startTcpProxy } from '../libs/testing/tcp-proxy.js';

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
  /** Settings of a destination delivering to this place, connecting to `address` (host:port) when given. */
  destination(address?: string): DestinationSettings;
  /** Settings of a destination whose server takes the connection and refuses the message; null where the server cannot refuse (the Kafka mock creates any topic). */
  refusing(): DestinationSettings | null;
  /** A way to make the server unreachable for the relay alone, or null (with why) where there is none. */
  outage(): Promise<Outage | string>;
  /** Everything that arrived so far, in order. */
  received(): Promise<ReceivedMessage[]>;
  cleanup(): Promise<void>;
}

/** The server made unreachable for a destination (and back), without stopping it for anyone else. */
export interface Outage {
  destination: DestinationSettings;
  goDown(): Promise<void>;
  comeUp(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy in front of the server: down, it refuses connections and drops the open ones. */
async function proxiedOutage(kit: Pick<TargetKit, 'destination'>, host: string, port: number): Promise<Outage> {
  const proxy = await startTcpProxy(host, port);
  return { destination: kit.destination(proxy.address), goDown: () => proxy.goDown(), comeUp: () => proxy.comeUp(), close: () => proxy.close() };
}

const lowerCased = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
const unique = () => randomBytes(5).toString('hex');

async function httpKit(): Promise<TargetKit> {
  const sink = await startHttpSink();
  const failing = await startHttpSink([respond(500, { body: 'no' })]);
  const port = Number(new URL(sink.url).port);
  const kit = {
    type: 'http' as const,
    destination: (address = `127.0.0.1:${port}`) => ({ url: `http://${address}/hooks` }),
    refusing: () => ({ url: `${failing.url}/hooks` }),
    received: async () => sink.requests.map((request) => ({ body: request.body.toString('utf8'), headers: lowerCased(request.headers as Record<string, unknown>) })),
    async cleanup() {
      await sink.close();
      await failing.close();
    },
  };
  return { ...kit, outage: () => proxiedOutage(kit, '127.0.0.1', port) };
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
  const kit: TargetKit = {
    type: 'rabbitmq',
    outage: () => proxiedOutage(kit, '127.0.0.1', 5672),
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
  return kit;
}

async function natsKit(): Promise<TargetKit> {
  const connection = await connectNats({ servers: 'nats://127.0.0.1:4222' });
  const manager = await connection.jetstreamManager();
  const name = `RELAY_TEST_${unique()}`;
  const subject = `relay-test.${name}`;
  await manager.streams.add({ name, subjects: [subject] });
  const kit: TargetKit = {
    type: 'nats',
    outage: () => proxiedOutage(kit, '127.0.0.1', 4222),
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
  return kit;
}

async function redisKit(): Promise<TargetKit> {
  const client = createClient({ url: 'redis://127.0.0.1:6379' });
  await client.connect();
  const stream = `relay-test:${unique()}`;
  const notAStream = `${stream}:string`;
  await client.set(notAStream, 'not a stream');
  const kit: TargetKit = {
    type: 'redis',
    outage: () => proxiedOutage(kit, '127.0.0.1', 6379),
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
  return kit;
}

/** A topic of a test's own on a cluster at `brokers`, read back by a consumer of its own. */
interface KafkaPlace {
  topic: string;
  brokers: string[];
  received(): Promise<ReceivedMessage[]>;
  cleanup(): Promise<void>;
}

/** The mock creates a topic on its first use, and cannot create one on request; on Kafka the topic is made first. */
async function kafkaPlace(brokers: string[], on: 'real' | 'mock'): Promise<KafkaPlace> {
  const kafka = new Kafka({ clientId: 'relay-test-kit', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = `relay-test-${unique()}`;
  if (on === 'real') await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  const consumer = kafka.consumer({ groupId: `${topic}-reader`, ...(on === 'mock' ? { maxWaitTimeInMs: 100, heartbeatInterval: 300, sessionTimeout: 4_500, rebalanceTimeout: 4_500 } : {}) });
  const received: ReceivedMessage[] = [];
  let reading = false;
  return {
    topic,
    brokers,
    /** Subscribed on the first read: on the mock the topic exists only once something was published to it. */
    async received() {
      if (!reading) {
        reading = true;
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
            received.push({ body: message.value?.toString('utf8') ?? '', headers });
          },
        });
      }
      return received;
    },
    async cleanup() {
      if (reading) await consumer.disconnect();
      if (on === 'real') await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

/**
 * A topic on the real cluster when there is one (KAFKA_BROKERS, or `npm run kafka:up`), else on a mock
 * cluster of the test's own. The outage is a cluster the test may freeze (SIGSTOP): the mock itself, or
 * on Kafka a one-broker cluster of the test's own (`kafkaClusterToFault`), since the shared one must keep
 * running for every other suite, and a proxy cannot stand in: clients get the brokers' addresses from
 * the cluster's metadata. The test's topic and reads then move to that cluster.
 */
async function kafkaKit(mocha: Context): Promise<TargetKit> {
  const real = realKafkaBrokers();
  if (!real && !kcatAvailable()) {
    console.log('      skipped: no Kafka cluster (npm run kafka:up) and no kcat for the librdkafka mock');
    mocha.skip();
  }
  const mock = real ? undefined : await startKafkaMock({ brokerCount: 1 });
  let place = await kafkaPlace(real ?? mock!.brokers, real ? 'real' : 'mock');
  let faulted: KafkaClusterToFault | undefined;
  const target = (over: string[] = place.brokers, name = place.topic) => ({ queue: { type: 'kafka' as const, target: { brokers: over, topic: name, key: 'sourceId' as const, ssl: false } } });
  return {
    type: 'kafka',
    destination: (address) => target(address ? [address] : place.brokers),
    refusing: () => (real ? target(place.brokers, `${place.topic}-missing`) : null),
    async outage() {
      if (mock) return { destination: target(), goDown: () => mock.pause(), comeUp: async () => mock.resume(), close: async () => mock.resume() };
      faulted = await kafkaClusterToFault(mocha, { brokerCount: 1 });
      const own = faulted;
      await place.cleanup();
      place = await kafkaPlace(own.brokers, own.kind);
      return { destination: target(), goDown: () => own.pause(), comeUp: async () => own.resume(), close: async () => own.resume() };
    },
    received: () => place.received(),
    async cleanup() {
      await place.cleanup();
      await faulted?.cleanup();
      await mock?.stop();
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
