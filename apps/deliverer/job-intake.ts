import type { BatchOutcome, Broker, BrokerRecord, Consumer, RecordBatch } from '../../libs/broker/broker.js';
import {
  CORE_TOPICS,
  DEAD_LETTER_TOPIC,
  DELIVERER_GROUP,
  DESTINATION_PARTITIONS,
  DESTINATION_TOPIC_PATTERN,
  FRESH_TOPIC,
  LANES_GROUP,
  LANES_PARTITIONS,
  LANES_TOPIC,
  RETRY_GROUP,
  RETRY_TIER_TOPICS,
} from '../../libs/pipeline/topology.js';
import { unrefSchedule, type Schedule } from '../../libs/time/schedule.js';
import type { DelivererLogger } from './destination-batch.js';
import { PauseHolds } from './pause-holds.js';

type BatchHandler = (batch: RecordBatch) => Promise<BatchOutcome>;

/** What the intake hands each consumer's batches to; made once the holds exist, since they pause these consumers. */
export interface IntakeHandlers {
  destinations: BatchHandler;
  lanes: BatchHandler;
  retries: BatchHandler;
}

export interface IntakeOptions {
  broker: Broker;
  logger: DelivererLogger;
  /** The timers of the holds (the system's by default) and of the subscription refresh (unref'd by default); tests advance their own. */
  schedule?: Schedule;
  /** Partitions of destination topics with requests in flight at once. */
  concurrency: number;
  /** Safety net for destination topics that appeared without a config change or a parking here (default 30 s). */
  subscriptionRefreshMs?: number;
}

/** The consumers while they run, with the holds that pause them. */
export interface RunningIntake {
  destinationHolds: PauseHolds;
  retryHolds: PauseHolds;
  /** Follows destination topics made since (a rebalance on Kafka). */
  refreshSubscription(): Promise<void>;
}

/**
 * The first part of the deliverer: taking jobs. Three consumer groups: `relay-deliverer` (every
 * destination's own topic, by pattern), the lanes (`relay.lanes` and `relay.fresh`, whose subscription
 * never changes, so they flow while the destination group rebalances) and `relay-retry` (the retry tiers).
 * Jobs that must wait are parked in their destination's own topic, made here before the first goes there.
 */
export function createJobIntake(options: IntakeOptions) {
  const { broker, logger } = options;
  const ensureOwnTopic = ownTopicsOf(broker);
  let consumers: { destinations: Consumer; lanes: Consumer; retries: Consumer } | null = null;
  let running: RunningIntake | null = null;
  let cancelSubscriptionRefresh: (() => void) | undefined;
  let stopped = false;

  const refreshSubscription = async (): Promise<void> => {
    await consumers?.destinations.refreshSubscription();
  };

  /** The next look is scheduled once this one is done, so a slow one (a rebalance on Kafka) never overlaps the next. */
  function refreshSubscriptionLater(): void {
    cancelSubscriptionRefresh = (options.schedule ?? unrefSchedule)(() => {
      refreshSubscription()
        .catch((error: unknown) => logger.warn({ err: error }, 'destination subscription refresh failed'))
        .finally(() => {
          if (!stopped) refreshSubscriptionLater();
        });
    }, options.subscriptionRefreshMs ?? 30_000);
  }

  return {
    ensureOwnTopic,

    /** Jobs of the lanes that must wait, moved to their destination's own topic, which the destination group then takes in. */
    async park(topic: string, records: BrokerRecord[]): Promise<void> {
      if (await ensureOwnTopic(topic)) {
        refreshSubscription().catch((error: unknown) => logger.warn({ err: error, topic }, 'destination subscription refresh failed'));
      }
      await broker.producer().send(topic, records.map(({ key, value, headers }) => ({ key, value, headers })));
    },

    /** Ensures the topics read here and makes the consumers; `handlersFor` gets their holds. Not started yet. */
    async open(handlersFor: (running: RunningIntake) => IntakeHandlers): Promise<RunningIntake> {
      const read = new Set([...RETRY_TIER_TOPICS, DEAD_LETTER_TOPIC, LANES_TOPIC]);
      await broker.admin().ensureTopics(CORE_TOPICS.filter(({ topic }) => read.has(topic)));
      let handlers: IntakeHandlers | undefined;
      const made = consumersOf(broker, options.concurrency, () => handlers!);
      consumers = made;
      running = { destinationHolds: new PauseHolds(made.destinations, options.schedule), retryHolds: new PauseHolds(made.retries, options.schedule), refreshSubscription };
      handlers = handlersFor(running);
      return running;
    },

    async start(): Promise<void> {
      if (!consumers) throw new Error('The intake is started once opened');
      await Promise.all([consumers.destinations.start(), consumers.lanes.start(), consumers.retries.start()]);
      refreshSubscriptionLater();
    },

    /** Stops taking jobs; the lanes' stop waits for the attempts they handed over (answered or timed out). */
    async stop(): Promise<void> {
      stopped = true;
      cancelSubscriptionRefresh?.();
      const current = consumers;
      if (!current || !running) return;
      await Promise.all([current.destinations.stop(), current.lanes.stop(), current.retries.stop()]);
      running.destinationHolds.clear();
      running.retryHolds.clear();
      consumers = null;
      running = null;
    },

    running: (): RunningIntake | null => running,
  };
}

/**
 * A pattern subscription covers only topics that exist: `ensureOwnTopic` makes a destination topic, once.
 * True to the one call that made it now; the calls meanwhile wait for it: a hanging destination's jobs are
 * parked from many lane batches at once, and each making the topic and refreshing the subscription again
 * stalled the process.
 */
function ownTopicsOf(broker: Broker) {
  /** Destination topics made, or being made, here. */
  const made = new Map<string, Promise<void>>();
  return async function ensureOwnTopic(topic: string): Promise<boolean> {
    const making = made.get(topic);
    if (making) {
      await making;
      return false;
    }
    const creation = broker.admin().ensureTopics([{ topic, partitions: DESTINATION_PARTITIONS }]);
    made.set(topic, creation);
    try {
      await creation;
    } catch (error) {
      made.delete(topic);
      throw error;
    }
    return true;
  };
}

/** The three consumers; their batches go to the handlers `handlers` answers once they are made. */
function consumersOf(broker: Broker, concurrency: number, handlers: () => IntakeHandlers) {
  return {
    destinations: broker.consumer({
      groupId: DELIVERER_GROUP,
      topicPattern: DESTINATION_TOPIC_PATTERN,
      fromBeginning: true,
      // Every partition may have requests in flight; the in-flight limits bound the requests themselves.
      concurrency,
      handleBatch: (batch) => handlers().destinations(batch),
    }),
    lanes: broker.consumer({
      groupId: LANES_GROUP,
      topics: [LANES_TOPIC, FRESH_TOPIC],
      fromBeginning: true,
      concurrency: LANES_PARTITIONS,
      handleBatch: (batch) => handlers().lanes(batch),
    }),
    retries: broker.consumer({
      groupId: RETRY_GROUP,
      topics: [...RETRY_TIER_TOPICS],
      fromBeginning: true,
      concurrency: RETRY_TIER_TOPICS.length * DESTINATION_PARTITIONS,
      handleBatch: (batch) => handlers().retries(batch),
    }),
  };
}

export type JobIntake = ReturnType<typeof createJobIntake>;
