import { expect } from 'chai';
import { Kafka, KafkaJSProtocolError, logLevel, type Message, type Producer as KafkaJsProducer } from 'kafkajs';
import { BrokerUnavailableError } from '../errors.js';
import { countingKafka } from '../../testing/counting-kafka.js';
import { kafkaClusterFor, kafkaClusterToFault, type KafkaClusterToFault } from '../../testing/kafka-target.js';
import { ManualTimers } from '../../testing/manual-timers.js';
import { silentLogger } from '../silent-logger.js';
import { connectKafkaBroker } from './kafka-broker.js';
import { KafkaProducer, requestsOfBoundedSize } from './kafka-producer.js';

const message = (bytes: number, key = 'k'): Message => ({ key, value: Buffer.alloc(bytes) });

describe('requestsOfBoundedSize', () => {
  it('keeps small sends together in one request', () => {
    const requests = requestsOfBoundedSize([{ topic: 'a', messages: [message(10), message(10)] }, { topic: 'b', messages: [message(10)] }], 1000);
    expect(requests).to.have.length(1);
    expect(requests[0]!.map((r) => [r.topic, r.messages.length])).to.deep.equal([['a', 2], ['b', 1]]);
  });

  it('when two large records would exceed the limit together, sends them in separate requests, in order', () => {
    const first = message(600, 'first');
    const second = message(600, 'second');
    const requests = requestsOfBoundedSize([{ topic: 'a', messages: [first, second] }], 1000);
    expect(requests.map((r) => r[0]!.messages[0]!.key)).to.deep.equal(['first', 'second']);
  });

  it('sends a record larger than the limit on its own', () => {
    const requests = requestsOfBoundedSize([{ topic: 'a', messages: [message(10), message(5000), message(10)] }], 1000);
    expect(requests.map((r) => r[0]!.messages.length)).to.deep.equal([1, 1, 1]);
  });
});

describe('KafkaProducer whose producer the broker refuses the sequence numbers of', () => {
  /** kafkajs clients that record what they were asked; the first fails every send as Kafka 4.4.0 did after a broker's SIGKILL. */
  function clients() {
    const made: { sent: number; disconnected: boolean }[] = [];
    const kafka = {
      producer: () => {
        const client = { sent: 0, disconnected: false };
        const failing = made.length === 0;
        made.push(client);
        return {
          connect: async () => undefined,
          disconnect: async () => {
            client.disconnected = true;
          },
          sendBatch: async () => {
            if (failing) throw new KafkaJSProtocolError(Object.assign(new Error('The broker received an out of order sequence number'), { type: 'OUT_OF_ORDER_SEQUENCE_NUMBER', code: 45, retriable: false }));
            client.sent += 1;
            return [];
          },
        } as unknown as KafkaJsProducer;
      },
    } as unknown as Kafka;
    return { kafka, made };
  }

  it('fails that send as unavailable (retriable), and sends the next on a fresh producer', async () => {
    const { kafka, made } = clients();
    const producer = new KafkaProducer(kafka, { idempotent: true, requestTimeoutMs: 1_000, maxRequestBytes: 1024 * 1024 }, silentLogger);
    const refused = await producer.send('spec.refused', [{ key: 'k', value: Buffer.from('a') }]).then(() => undefined, (error: unknown) => error);
    expect(refused).to.be.instanceOf(BrokerUnavailableError);
    expect(refused).to.include({ status: 503, retriable: true });
    await producer.send('spec.refused', [{ key: 'k', value: Buffer.from('a') }]);
    await producer.send('spec.refused', [{ key: 'k', value: Buffer.from('b') }], { gather: true });
    // A topic's sends go on a producer of their own until one is acknowledged, then on the shared one.
    expect(made.map(({ sent, disconnected }) => ({ sent, disconnected }))).to.deep.equal([
      { sent: 0, disconnected: true },
      { sent: 1, disconnected: false },
      { sent: 1, disconnected: false },
    ]);
  });
});

describe('KafkaProducer beside a topic made moments ago, on the shared cluster', function () {
  this.timeout(60_000);

  it('answers the sends to a topic it sent to before while the first produce to the new one waits for its followers', async function () {
    const cluster = await kafkaClusterFor(this);
    if (cluster.kind !== 'real') {
      // The mock has no followers to wait for: its first produce to a partition is answered at once.
      console.log('      skipped: the librdkafka mock answers the first produce to a new partition at once');
      await cluster.cleanup();
      this.skip();
    }
    const broker = await connectKafkaBroker({ brokers: cluster.brokers, topicPrefix: cluster.prefix });
    try {
      const record = (key: string) => [{ key, value: Buffer.from(key) }];
      await broker.admin().ensureTopics([{ topic: 'spec.steady', partitions: 8 }]);
      // The first proves the topic, the second connects the shared producer.
      for (const key of ['warm-up', 'connect']) await broker.producer().send('spec.steady', record(key));
      await broker.admin().ensureTopics([{ topic: 'spec.new', partitions: 4 }]);
      const answered: string[] = [];
      const first = broker.producer().send('spec.new', record('first')).then(() => answered.push('new'));
      await new Promise((resolve) => setImmediate(resolve));
      const steady = broker.producer().send('spec.steady', record('steady')).then(() => answered.push('steady'));
      await Promise.all([first, steady]);
      expect(answered).to.deep.equal(['steady', 'new']);
    } finally {
      await broker.close();
      await cluster.cleanup();
    }
  });
});

/** The topics the cases send to, made before them (a real broker answers the first send to an unknown topic with a retriable error). */
const TOPICS = ['spec.turn', 'spec.other', 'spec.flight', 'spec.gather', 'spec.plain', 'spec.failure'];

describe('KafkaProducer on a cluster of one broker of its own (Apache Kafka; locally, without a JVM, the librdkafka mock)', function () {
  this.timeout(180_000);
  let cluster: KafkaClusterToFault | undefined;

  before(async function () {
    cluster = await kafkaClusterToFault(this, { brokerCount: 1 });
    // A client that retries, so the brokers' auto-creation of each topic settles before the cases.
    const warmUp = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING }).producer();
    await warmUp.connect();
    for (const topic of TOPICS) await warmUp.send({ topic, messages: [{ key: 'created', value: 'created' }] });
    await warmUp.disconnect();
  });

  after(async () => {
    await cluster?.cleanup();
  });

  /** A producer over a kafkajs client that counts its requests; no retries, so a failure shows at once. */
  function countingProducer(gather?: { gatherMs: number; timers: ManualTimers }) {
    const counting = countingKafka(new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 } }));
    const producer = new KafkaProducer(
      counting.kafka,
      { idempotent: false, requestTimeoutMs: 5_000, maxRequestBytes: 1024 * 1024, gatherMs: gather?.gatherMs, timers: gather?.timers },
      silentLogger,
    );
    return { producer, produceRequests: () => counting.requests('Produce') };
  }

  const record = (key: string) => ({ key, value: Buffer.from(key) });

  it('sends the sends asked for in one turn as one produce request', async () => {
    const { producer, produceRequests } = countingProducer();
    await Promise.all(['spec.turn', 'spec.other'].map((topic) => producer.send(topic, [record('warm-up')])));
    const before = produceRequests();
    await Promise.all(['a', 'b', 'c'].map((key) => producer.send(key === 'c' ? 'spec.other' : 'spec.turn', [record(key)])));
    expect(produceRequests() - before).to.equal(1);
    await producer.close();
  });

  it('sends the sends asked for while a produce is in flight together, once it is answered', async () => {
    const { producer, produceRequests } = countingProducer();
    await producer.send('spec.flight', [record('warm-up')]);
    const before = produceRequests();
    await cluster!.pause();
    const first = producer.send('spec.flight', [record('first')]);
    // Each later send is asked for in a turn of its own, while the first is in flight and unanswered.
    const later: Promise<void>[] = [];
    for (const key of ['second', 'third', 'fourth']) {
      await new Promise((resolve) => setImmediate(resolve));
      later.push(producer.send('spec.flight', [record(key)]));
    }
    cluster!.resume();
    await Promise.all([first, ...later]);
    expect(produceRequests() - before).to.equal(2);
    await producer.close();
  });

  it('holds gathered sends made within the gather interval of the last request and sends them together at its end', async () => {
    const timers = new ManualTimers(Date.now());
    const { producer, produceRequests } = countingProducer({ gatherMs: 20, timers });
    // The first send of a topic goes on a producer of its own; the second starts the gathered lane's interval.
    await producer.send('spec.gather', [record('proof')], { gather: true });
    await producer.send('spec.gather', [record('first')], { gather: true });
    const before = produceRequests();
    const gathered: Promise<void>[] = [];
    for (const key of ['second', 'third', 'fourth']) {
      gathered.push(producer.send('spec.gather', [record(key)], { gather: true }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A send that does not gather is not held by the gathered ones' interval.
    await producer.send('spec.plain', [record('plain')]);
    expect(produceRequests() - before).to.equal(1);
    timers.advance(20);
    await Promise.all(gathered);
    expect(produceRequests() - before).to.equal(2);
    await producer.close();
  });

  // Stops the brokers: the last case.
  it('fails each send that shared a failed produce request with the failure', async () => {
    const { producer } = countingProducer();
    await producer.send('spec.failure', [record('warm-up')]);
    await cluster!.stopBrokers();
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((key) => producer.send('spec.failure', [record(key)])));
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).constructor.name : 'fulfilled'))).to.deep.equal([
      'BrokerUnavailableError',
      'BrokerUnavailableError',
      'BrokerUnavailableError',
    ]);
    await producer.close();
  });
});
