import type { Kafka, Message, Producer as KafkaJsProducer, TopicMessages } from 'kafkajs';
import type { BrokerLogger, OutgoingMessage, Producer, SendOptions } from '../broker.js';
import { tickBatcher, type TickBatched } from '../../concurrency/tick-batcher.js';
import { BrokerUnavailableError } from '../errors.js';
import type { RelayError } from '../../errors/errors.js';
import { partitionFor } from '../partitioner.js';
import { assertTopicName } from '../topic-name.js';
import { lostProducerState, toBrokerError } from './kafka-errors.js';
import type { Schedule } from '../../time/schedule.js';

export interface KafkaProducerSettings {
  /** Ask for an idempotent producer; falls back to a plain one (still acks -1) where the cluster refuses it. */
  idempotent: boolean;
  requestTimeoutMs: number;
  /**
   * Upper bound on the record bytes of one produce request. Kafka checks `message.max.bytes` against
   * everything sent to a partition in one request, so two 10 MB webhooks must not share one.
   */
  maxRequestBytes: number;
  /** Gathered sends (`{ gather: true }`) start a request no sooner than this after the previous one (default 0). */
  gatherMs?: number;
  /** The clock and timers the gather interval is kept by (the real ones by default). */
  timers?: { now: () => number; schedule: Schedule };
}

const messageBytes = (message: Message) =>
  (message.value?.length ?? 0) +
  (message.key?.length ?? 0) +
  Object.entries(message.headers ?? {}).reduce((sum, [name, value]) => sum + name.length + String(value).length, 0);

/** Splits pending sends into produce requests of at most `limit` bytes (a larger record goes alone), in order. */
export function requestsOfBoundedSize(sends: PendingSend[], limit: number): TopicMessages[][] {
  const requests: TopicMessages[][] = [];
  let current = new Map<string, Message[]>();
  let size = 0;
  const close = () => {
    if (current.size > 0) requests.push([...current].map(([topic, messages]) => ({ topic, messages })));
    current = new Map();
    size = 0;
  };
  for (const send of sends) {
    for (const message of send.messages) {
      const bytes = messageBytes(message);
      if (size > 0 && size + bytes > limit) close();
      const list = current.get(send.topic);
      if (list) list.push(message);
      else current.set(send.topic, [message]);
      size += bytes;
    }
  }
  close();
  return requests;
}

interface PendingSend {
  topic: string;
  messages: Message[];
}

/** The shared partitioner: the same key -> partition mapping as the embedded log, counts from metadata. */
const createPartitioner = () => (args: { partitionMetadata: unknown[]; message: Message }) =>
  partitionFor(args.message.key === null || args.message.key === undefined ? null : String(args.message.key), args.partitionMetadata.length);

/**
 * Sends with acks -1. Sends requested within one tick, or while the previous produce is in flight, go out
 * together as one produce request per broker (kafkajs has no linger of its own, and sends one request at a
 * time per broker anyway); each caller's promise settles with its own outcome. Sends asked to gather (a
 * publisher of one record at a time: the gateway) take a lane of their own that also waits out `gatherMs`
 * after its previous request started, so a busy gateway's webhooks travel, and are read, in batches (a hop
 * writes a batch's records together anyway, and must not wait: on a cluster that answers a fetch with one
 * produce request's records, librdkafka's mock, a hop slower than its producer never catches up).
 *
 * The sends to a topic go on a kafkajs producer of their own until one of them is acknowledged: Kafka
 * answers the first produce to a partition made moments ago only once its followers take it into their
 * fetches, up to `replica.fetch.wait.max.ms` later (500 ms by default; 350-500 ms measured on 4.4.0, 1.5 s
 * and more under load), and on the shared producer (one request in flight per broker, one flush at a
 * time) every other send of the process would wait with it: a destination's first parked job stalled the
 * router and the gateway. A topic's sends stay on that producer while any is in flight there, so their
 * order holds.
 */
export class KafkaProducer implements Producer {
  private readonly main: ProducerSlot;
  private readonly firstSends: ProducerSlot;
  private readonly batched: TickBatched<PendingSend, RelayError | undefined>;
  private readonly gathered: TickBatched<PendingSend, RelayError | undefined>;
  private readonly unproven: TickBatched<PendingSend, RelayError | undefined>;
  /** Topics a send of which was acknowledged on the first-sends producer, with none left in flight there. */
  private readonly proven = new Set<string>();
  /** Sends in flight on the first-sends producer, by topic. */
  private readonly unprovenInFlight = new Map<string, number>();
  private closed = false;

  constructor(
    kafka: Kafka,
    private readonly settings: KafkaProducerSettings,
    logger: BrokerLogger,
  ) {
    this.main = new ProducerSlot(kafka, settings.idempotent, logger);
    this.firstSends = new ProducerSlot(kafka, settings.idempotent, logger);
    // A topic and key is sent by one kind of publisher, so one lane, and its order holds.
    this.batched = tickBatcher((sends) => this.flush(this.main, sends), { maxBatch: Infinity, serial: true });
    this.gathered = tickBatcher((sends) => this.flush(this.main, sends), { maxBatch: Infinity, serial: true, minIntervalMs: settings.gatherMs ?? 0, ...settings.timers });
    this.unproven = tickBatcher((sends) => this.flush(this.firstSends, sends), { maxBatch: Infinity, serial: true });
  }

  async send(topic: string, messages: OutgoingMessage[], options?: SendOptions): Promise<void> {
    if (this.closed) throw new BrokerUnavailableError('The Kafka broker is closed');
    if (messages.length === 0) return;
    assertTopicName(topic);
    const pending = { topic, messages: messages.map((message) => ({ key: message.key, value: message.value, headers: message.headers })) };
    const failure = this.proven.has(topic) ? await (options?.gather ? this.gathered : this.batched)(pending) : await this.sendUnproven(pending);
    if (failure) throw failure;
  }

  /** Sends what is pending, waits for in-flight requests, then disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.batched.drained(), this.gathered.drained(), this.unproven.drained()]);
    await Promise.all([this.main.close(), this.firstSends.close()]);
  }

  /** The topic takes the shared producer once a send of it is acknowledged here with no other in flight. */
  private async sendUnproven(send: PendingSend): Promise<RelayError | undefined> {
    const { topic } = send;
    this.unprovenInFlight.set(topic, (this.unprovenInFlight.get(topic) ?? 0) + 1);
    let acknowledged = false;
    try {
      const failure = await this.unproven(send);
      acknowledged = !failure;
      return failure;
    } finally {
      const left = this.unprovenInFlight.get(topic)! - 1;
      if (left > 0) this.unprovenInFlight.set(topic, left);
      else this.unprovenInFlight.delete(topic);
      if (acknowledged && left === 0) this.proven.add(topic);
    }
  }

  /** Produces the sends together; answers each send's failure, or undefined where it is durable. */
  private async flush(slot: ProducerSlot, sends: PendingSend[]): Promise<(RelayError | undefined)[]> {
    const client = slot.connect();
    try {
      await this.produce(client, sends);
      return sends.map(() => undefined);
    } catch (error) {
      if (lostProducerState(error)) slot.replace(client);
      const failure = toBrokerError(error, 'Kafka produce failed', sends.length === 1 ? sends[0]!.topic : undefined);
      if (failure.retriable || sends.length === 1) return sends.map(() => failure);
      // One bad send (too large, invalid topic) must not fail the others that shared its request.
      return Promise.all(
        sends.map((send) =>
          this.produce(slot.connect(), [send]).then(
            () => undefined,
            (cause: unknown) => toBrokerError(cause, 'Kafka produce failed', send.topic),
          ),
        ),
      );
    }
  }

  private async produce(connecting: Promise<KafkaJsProducer>, sends: PendingSend[]): Promise<void> {
    const client = await connecting;
    // One request after another: order per key holds across the split.
    for (const topicMessages of requestsOfBoundedSize(sends, this.settings.maxRequestBytes)) {
      await client.sendBatch({ acks: -1, timeout: this.settings.requestTimeoutMs, topicMessages });
    }
  }
}

/** One kafkajs producer, connected at its first send and replaced when its idempotence state is lost. */
class ProducerSlot {
  private client: Promise<KafkaJsProducer> | null = null;

  constructor(
    private readonly kafka: Kafka,
    private readonly idempotent: boolean,
    private readonly logger: BrokerLogger,
  ) {}

  connect(): Promise<KafkaJsProducer> {
    this.client ??= this.open().catch((error: unknown) => {
      this.client = null;
      throw error;
    });
    return this.client;
  }

  /**
   * Drops a client whose idempotence state is lost, so the next send starts a fresh one (a new producer id).
   * A send of the other lane still in flight on the old one fails retriably, as it would have anyway.
   */
  replace(stale: Promise<KafkaJsProducer>): void {
    // The other lane may have met the same answer on the same client, and replaced it already.
    if (this.client !== stale) return;
    this.client = null;
    this.logger.warn({}, "Kafka refused the producer's sequence numbers; sending on with a fresh producer");
    void stale.then((client) => client.disconnect()).catch(() => undefined);
  }

  async close(): Promise<void> {
    const client = await this.client?.catch(() => null);
    await client?.disconnect();
  }

  private async open(): Promise<KafkaJsProducer> {
    if (this.idempotent) {
      const idempotent = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner });
      try {
        await idempotent.connect();
        return idempotent;
      } catch (error) {
        await idempotent.disconnect().catch(() => undefined);
        this.logger.warn({ err: error }, 'Kafka refused an idempotent producer; using a plain producer with acks -1');
      }
    }
    // One request in flight per broker, as the idempotent producer has: a retried request can then never
    // land after a later one, so records of one key keep their order.
    const plain = this.kafka.producer({ createPartitioner, maxInFlightRequests: 1 });
    await plain.connect();
    return plain;
  }
}
