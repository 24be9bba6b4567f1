import { createRelayTracer } from '../libs/tracing/relay-tracer.js';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Broker, BrokerRecord, Consumer } from '../libs/broker/broker.js';
import { openEmbeddedBroker } from '../libs/broker/embedded/embedded-broker.js';
import type { CircuitBreakersOptions } from '../libs/delivery/circuit-breakers.js';
import { createHttpSender } from '../libs/delivery/send-request.js';
import { httpTargetSender, type TargetSender } from '../libs/delivery/target-port.js';
import { createTargetSenders } from '../libs/delivery/targets/target-senders.js';
import { createTargetCheck } from '../libs/delivery/allowed-target.js';
import type { QueueTarget } from '../libs/destinations/queue-target.js';
import { sealQueueTarget } from '../libs/destinations/queue-target-seal.js';
import { newId } from '../libs/ids/ids.js';
import { createLogger } from '../libs/logging/logger.js';
import { createRelayMetrics, type RelayMetrics } from '../libs/metrics/relay-metrics.js';
import { decodeAttemptRecord, type AttemptRecord } from '../libs/pipeline/attempt-record.js';
import { decodeConfigChange, encodeConfigChange, type ConfigChange } from '../libs/pipeline/config-change.js';
import { createDeadLetters, type DeadLetters } from '../libs/pipeline/dead-letter.js';
import { encodeDeliveryJob, type DeliveryJob } from '../libs/pipeline/delivery-job.js';
import { createSecretBox, type SecretBox } from '../libs/secrets/secret-box.js';
import { generateSigningSecret } from '../libs/secrets/signing-secret.js';
import type { DestinationRow } from '../libs/store/entities/destination.js';
import type { SourceRow } from '../libs/store/entities/source.js';
import { openStore, type Store } from '../libs/store/store.js';
import { destinationRow, sourceRow } from '../libs/testing/store-fixtures.js';
import { startHttpSink, type HttpSink } from '../libs/testing/http-sink.js';
import { createDeliverer, type Deliverer } from '../apps/deliverer/deliverer.js';
import { openDeliveredJournal } from '../apps/deliverer/delivered-journal.js';
import { createStoreDeliveryLookup } from '../libs/delivery/store-lookup.js';
import { createGoneDestinations, type GoneDestinations } from '../apps/deliverer/gone-destinations.js';
import { createSqlSourceLines } from '../libs/ordering/source-lines.js';
import { deliveredAmong } from '../libs/ledger/deliveries.js';
import type { Schedule } from '../libs/time/schedule.js';
import { ATTEMPTS_TOPIC, CONFIG_TOPIC, DEAD_LETTER_TOPIC, destinationTopic } from '../libs/pipeline/topology.js';

/** Records of one topic as a test reads them, with a way to wait for the ones it expects. */
export class Collected<T> {
  readonly items: T[] = [];
  private readonly waiters = new Set<() => void>();

  add(item: T): void {
    this.items.push(item);
    for (const wake of this.waiters) wake();
  }

  /** Resolves with the matching items once there are at least `count`; rejects after `timeoutMs`. */
  waitFor(count: number, match: (item: T) => boolean = () => true, timeoutMs = 5000): Promise<T[]> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.items.filter(match);
        if (found.length < count) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`expected ${count} matching records within ${timeoutMs} ms, got ${this.items.filter(match).length}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
}

export interface HarnessOptions {
  breakerOptions?: Omit<CircuitBreakersOptions, 'onStateChange' | 'schedule' | 'now'>;
  maxInFlight?: number;
  maxInFlightPerSource?: number;
  /** The deliverer's and the log's clock and the timers of the deliverer's pauses and breakers, for a test that moves time on itself (ManualTimers). */
  now?: () => number;
  schedule?: Schedule;
}

export interface DestinationSettings extends Partial<Omit<DestinationRow, 'authConfigSealed' | 'signingSecretSealed' | 'type' | 'targetSealed'>> {
  authConfig?: Record<string, string>;
  /** A queue destination's type and target (sealed as the API seals it); HTTP to `url` without. */
  queue?: QueueTarget;
}

/**
 * The deliverer on a real embedded log and SQLite store in a temp dir, with an organization and a
 * source. Jobs are published to relay.dst.<id> as the router would; relay.attempts and relay.dead are
 * read back by consumers of the test's own; relay.config reaches the deliverer through `refresh`, as
 * the composition root wires it.
 */
export interface DelivererHarness {
  broker: Broker;
  store: Store;
  secrets: SecretBox;
  metrics: RelayMetrics;
  /** What the deliverer disables gone destinations with (announced on relay.config). */
  gone: GoneDestinations;
  /** The one way into relay.dead, counted in `metrics` (what the deliverer role is given). */
  deadLetters: DeadLetters;
  deliverer: Deliverer;
  orgId: string;
  source: SourceRow;
  attempts: Collected<AttemptRecord>;
  /** Raw records of relay.dead (a malformed record has no job to decode). */
  dead: Collected<BrokerRecord>;
  /** Inserts a destination (sealed credentials and signing secret) and returns it with its secret. */
  addDestination(settings: DestinationSettings): Promise<DestinationRow & { signingSecret: string }>;
  /** A first-attempt job for `destinationId` from the harness's source, not published. */
  jobFor(destinationId: string, overrides?: Partial<DeliveryJob>): DeliveryJob;
  /** Publishes a job (`jobFor`) to the destination's topic and returns it. */
  publishJob(destinationId: string, body: Buffer, overrides?: Partial<DeliveryJob>): Promise<DeliveryJob>;
  /** Publishes a change on relay.config. */
  announce(change: ConfigChange): Promise<void>;
  attemptsOf(deliveryId: string, count: number, timeoutMs?: number): Promise<AttemptRecord[]>;
  /**
   * Whether the deliverer's consumers have `topic` (or one of its partitions) paused: a record of it was
   * fetched and held (rate budget, circuit, disabled destination, not due), so nothing of it is sent meanwhile.
   */
  paused(topic: string): boolean;
  /** Starts one more deliverer in the same groups, on the same log and store (config changes reach only the first). */
  startAnotherDeliverer(): Promise<Deliverer>;
  /** Where each deliverer of the harness keeps its journal of delivered attempts (one file each), and reads the others' when it starts. */
  journalDir: string;
  /** How many requests `deliverer` (the first or another) has sent. */
  requestsSent(deliverer: Deliverer): number;
  close(): Promise<void>;
}

const quietLogger = createLogger({ level: 'silent' });

export async function startDelivererHarness(options: HarnessOptions = {}): Promise<DelivererHarness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-deliverer-'));
  const broker = openEmbeddedBroker({ dataDir, errorBackoff: { initialMs: 20, maxMs: 200 }, now: options.now });
  const store = await openStore({ dataDir });
  const secrets = createSecretBox(randomBytes(32));
  const org = await store.organizations.create(`org-${randomBytes(4).toString('hex')}`, 'pro');
  const source = await store.sources.insert(sourceRow(org.id, { name: 'Shop', slug: 'shop-events', provider: 'generic', dedupStrategy: 'none' }));
  const metrics = createRelayMetrics({ defaultMetrics: false });
  const pausedKeys = new Set<string>();
  const deadLetters = createDeadLetters((topic, messages) => broker.producer().send(topic, messages), metrics.deadLetters);
  const gone = createGoneDestinations(store.sql, (change) => broker.producer().send(CONFIG_TOPIC, [encodeConfigChange(change)]));
  const requestsSent = new Map<Deliverer, number>();
  const journalDir = dataDir;
  const newDeliverer = () => {
    const sender = createTargetSenders({
      http: httpTargetSender(createHttpSender({ blockPrivateDestinations: false })),
      checkTarget: createTargetCheck({ blockPrivateDestinations: false }),
    });
    const counted: TargetSender = {
      send(request, target, context) {
        requestsSent.set(made, requestsSent.get(made)! + 1);
        return sender.send(request, target, context);
      },
      forget: (destinationId) => sender.forget(destinationId),
      close: () => sender.close(),
    };
    const made = createDeliverer({
      broker: watchingPauses(broker, pausedKeys),
      destinations: {
        lookup: createStoreDeliveryLookup(store, secrets),
        gone,
        lines: createSqlSourceLines(store.sql, deadLetters),
        secrets,
        delivered: (deliveryIds) => deliveredAmong(store.sql, deliveryIds),
      },
      sending: { sender: counted, maxInFlight: options.maxInFlight, maxInFlightPerSource: options.maxInFlightPerSource },
      checks: { breakerOptions: options.breakerOptions },
      retries: { jitter: 0 },
      journal: openDeliveredJournal(journalDir, `deliverer-${requestsSent.size}`),
      observe: { metrics, logger: quietLogger, tracer: createRelayTracer({ serviceName: 'deliverer-harness', sampleRatio: 1 }) },
      clock: { now: options.now, schedule: options.schedule },
    });
    requestsSent.set(made, 0);
    return made;
  };
  const deliverer = newDeliverer();
  const others: Deliverer[] = [];

  const attempts = new Collected<AttemptRecord>();
  const dead = new Collected<BrokerRecord>();
  const reader = (groupId: string, topic: string, take: (record: BrokerRecord) => unknown): Consumer =>
    broker.consumer({
      groupId,
      topics: [topic],
      fromBeginning: true,
      handleBatch: async (batch) => {
        for (const record of batch.records) await take(record);
      },
    });
  const consumers = [
    reader('test-attempts', ATTEMPTS_TOPIC, (record) => attempts.add(decodeAttemptRecord(record))),
    reader('test-dead', DEAD_LETTER_TOPIC, (record) => dead.add(record)),
    reader('test-config', CONFIG_TOPIC, (record) => deliverer.refresh(decodeConfigChange(record))),
  ];
  for (const consumer of consumers) await consumer.start();
  await deliverer.start();

  const jobFor = (destinationId: string, overrides: Partial<DeliveryJob> = {}): DeliveryJob => ({
    deliveryId: newId('dlv'),
    eventId: newId('evt'),
    orgId: org.id,
    sourceId: source.id,
    destinationId,
    attemptNumber: 1,
    dueAt: 0,
    contentType: 'application/json',
    providerHeaders: {},
    signatureValid: true,
    receivedAt: Date.now(),
    ...overrides,
  });

  return {
    broker,
    store,
    secrets,
    metrics,
    gone,
    deadLetters,
    deliverer,
    orgId: org.id,
    source,
    attempts,
    dead,
    async addDestination({ authConfig, queue, ...settings }) {
      const signingSecret = generateSigningSecret();
      const row = await store.destinations.insert(
        destinationRow(org.id, secrets.seal(signingSecret), {
          name: 'Orders service',
          slug: `orders-${randomBytes(3).toString('hex')}`,
          ...settings,
          ...(queue ? { type: queue.type, url: '', targetSealed: sealQueueTarget(secrets, queue) } : {}),
          authConfigSealed: authConfig ? secrets.seal(JSON.stringify(authConfig)) : null,
        }),
      );
      return { ...row, signingSecret };
    },
    jobFor,
    async publishJob(destinationId, body, overrides = {}) {
      const job = jobFor(destinationId, overrides);
      await broker.producer().send(destinationTopic(destinationId), [encodeDeliveryJob(job, body)]);
      return job;
    },
    async announce(change) {
      await broker.producer().send(CONFIG_TOPIC, [encodeConfigChange(change)]);
    },
    attemptsOf(deliveryId, count, timeoutMs) {
      return attempts.waitFor(count, (attempt) => attempt.deliveryId === deliveryId, timeoutMs);
    },
    paused: (topic) => [...pausedKeys].some((key) => key.split('#')[0] === topic),
    async startAnotherDeliverer() {
      const other = newDeliverer();
      others.push(other);
      await other.start();
      return other;
    },
    journalDir,
    requestsSent: (of) => requestsSent.get(of) ?? 0,
    async close() {
      for (const each of [deliverer, ...others]) await each.stop();
      for (const consumer of consumers) await consumer.stop();
      await broker.close();
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `broker`, whose consumers note in `pausedKeys` what they have paused (`topic`, or `topic#partition`). */
function watchingPauses(broker: Broker, pausedKeys: Set<string>): Broker {
  const keysOf = (topic: string, partitions?: number[]) => (partitions ? partitions.map((partition) => `${topic}#${partition}`) : [topic]);
  return {
    producer: () => broker.producer(),
    admin: () => broker.admin(),
    close: () => broker.close(),
    consumer(options) {
      const consumer = broker.consumer(options);
      return {
        start: () => consumer.start(),
        pause(topic, partitions) {
          for (const key of keysOf(topic, partitions)) pausedKeys.add(key);
          consumer.pause(topic, partitions);
        },
        resume(topic, partitions) {
          for (const key of keysOf(topic, partitions)) pausedKeys.delete(key);
          consumer.resume(topic, partitions);
        },
        refreshSubscription: () => consumer.refreshSubscription(),
        assignment: () => consumer.assignment(),
        stop: () => consumer.stop(),
      };
    },
  };
}

/** What each test of a suite registered by `eachTestDelivererAndSink` gets. */
export interface DelivererAndSink {
  h: DelivererHarness;
  sink: HttpSink;
}

/**
 * Gives each test of the calling suite a fresh harness (with the options `options` makes for it) and an
 * HTTP sink (answers 200), closing both after it.
 */
export function eachTestDelivererAndSink(options?: () => HarnessOptions): DelivererAndSink {
  const fixture = {} as DelivererAndSink;
  beforeEach(async function () {
    fixture.h = await startDelivererHarness(options?.());
    fixture.sink = await startHttpSink();
  });
  afterEach(async function () {
    await fixture.h.close();
    await fixture.sink.close();
  });
  return fixture;
}
