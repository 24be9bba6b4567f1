import type { BatchOutcome, Broker, BrokerRecord, Consumer, RecordBatch } from '../../libs/broker/broker.js';
import type { RelayTracer } from '../../libs/tracing/relay-tracer.js';
import { CIRCUIT_STATES, createCircuitBreakers, type CircuitBreakersOptions, type CircuitState } from '../../libs/delivery/circuit-breakers.js';
import { DEFAULT_CONNECTIONS_PER_ORIGIN, type HttpSender } from '../../libs/delivery/send-request.js';
import { createDestinationRateLimiters, createSharedRateLimiters, type SharedWindows } from '../../libs/delivery/token-bucket.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import { createAttemptReporter } from './attempt-reporter.js';
import { createCachedLookup } from './cached-lookup.js';
import type { DeliveryLookup } from '../../libs/delivery/delivery-lookup.js';
import { createDestinationBatchHandler, HOLD, type DelivererLogger } from './destination-batch.js';
import { createLaneJobsHandler } from './lane-jobs.js';
import type { GoneDestinations } from './gone-destinations.js';
import type { SourceLines } from './source-lines.js';
import { createInFlightLimits } from './in-flight-limits.js';
import { PauseHolds } from './pause-holds.js';
import { unrefSchedule, type Schedule } from '../../libs/time/schedule.js';
import { createRetryTierHandler } from './retry-tiers.js';
import {
  CORE_TOPICS,
  DEAD_LETTER_TOPIC,
  DELIVERER_GROUP,
  DESTINATION_PARTITIONS,
  DESTINATION_TOPIC_PATTERN,
  destinationTopic,
  FRESH_TOPIC,
  LANES_GROUP,
  LANES_PARTITIONS,
  LANES_TOPIC,
  RETRY_GROUP,
  RETRY_TIER_TOPICS,
} from '../../libs/pipeline/topology.js';

/**
 * A destination may have this many jobs per connection place in flight from the lanes (1,024 by default);
 * beyond that (it hangs or cannot keep up) its jobs are parked in its own topic instead. Not fewer: a
 * healthy destination's moment of slowness (at 800/s, 4 per place parked jobs of a warming relay, whose
 * topic then waited ~4 s for the group to take it in) should slow it, not park it.
 */
const LANE_RECORDS_PER_DESTINATION_PLACE = 16;
/** Jobs of all destinations in flight from the lanes, per place of the process (16,384 by default): past it the lanes wait. */
const LANE_RECORDS_PER_PROCESS_PLACE = 64;

/** How often the breakers and rate buckets of destinations no longer sent to are dropped. */
export const IDLE_STATE_SWEEP_MS = 60_000;

export interface DelivererOptions {
  broker: Broker;
  /** Over the store and the secret box: `createStoreDeliveryLookup(store, secrets)`. Cached here. */
  lookup: DeliveryLookup;
  /** Closed by `stop`. */
  sender: HttpSender;
  /** Opens bodies the gateway sealed before they reached the log (sources with `encryptFields`). */
  secrets: SecretBox;
  metrics: RelayMetrics;
  /** Disables destinations that answer `410 Gone`: `createGoneDestinations(sql, announce)`. */
  gone: GoneDestinations;
  /** The lines of ordered destinations (`ordering: "source"`): `createSqlSourceLines(sql)`. */
  lines: SourceLines;
  logger: DelivererLogger;
  /** The attempts' and retry waits' spans. */
  tracer: RelayTracer;
  /** Fraction of each retry delay added or removed at random (`RELAY_RETRY_JITTER`). */
  jitter: number;
  random?: () => number;
  now?: () => number;
  /**
   * The timers of the pauses (rate budget, disabled recheck, retry tier due times), the breakers' resets,
   * the idle-state sweep and the subscription refresh; tests advance their own.
   */
  schedule?: Schedule;
  /** Delivery requests in flight in the process (default 256). */
  maxInFlight?: number;
  /** Delivery requests in flight to one destination (default: the sender's default connections per origin, 64). */
  maxInFlightPerDestination?: number;
  /**
   * Jobs of one source to one destination in flight at once, started in the order received
   * (`RELAY_MAX_IN_FLIGHT_PER_SOURCE`; default and at most `maxInFlightPerDestination`). 1 sends the
   * next one only after the previous one's answer.
   */
  maxInFlightPerSource?: number;
  breakerOptions?: Omit<CircuitBreakersOptions, 'onStateChange' | 'schedule' | 'now'>;
  /** Safety net for missed config changes (default 60 s). */
  lookupCacheTtlMs?: number;
  /** Safety net for destination topics that appeared without a config change or a parking here (default 30 s). */
  subscriptionRefreshMs?: number;
  /** Told each change of a destination's breaker; the composition root publishes it on relay.config. */
  onCircuitChange?: (destinationId: string, state: CircuitState) => void;
  /**
   * Where every deliverer's requests to a rate-limited destination are counted (the store's windows),
   * when several may share its partitions; without it the limit is this process's own.
   */
  sharedRateWindows?: SharedWindows;
}

export interface Deliverer {
  /**
   * Ensures the retry tier, lanes and dead letter topics, then joins the groups `relay-deliverer`,
   * `relay-deliverer-fresh` (the lanes) and `relay-retry`.
   */
  start(): Promise<void>;
  /**
   * Stops taking new jobs, lets the requests in flight finish (each is bounded by its destination's
   * timeout, at most 60 s), publishes and commits their attempts, then closes the sender. Final.
   */
  stop(): Promise<void>;
  /**
   * Applies a relay.config change (every change when none is given): forgets cached destinations,
   * resumes a re-enabled destination, resets the circuit and rate budget of an updated or deleted one,
   * lets go of the lines of a destination no longer ordered, follows new destination topics, and takes
   * on the breaker states other deliverers announce. The
   * composition root calls it for each record of relay.config.
   */
  refresh(change?: ConfigChange): Promise<void>;
  /** For the destination and health views. */
  circuitState(destinationId: string): CircuitState;
}

/**
 * The delivery consumer: the lanes and destination topics in, HTTP requests out, every attempt published to
 * relay.attempts, retries through the relay.retry.<tier> topics, exhausted jobs to relay.dead.
 *
 * A disabled destination holds its jobs: its topic stays paused until it is enabled again (disabling
 * is usually temporary, and the jobs are kept in the log meanwhile). A deleted destination fails its
 * jobs: each is recorded as a `failed` attempt (errorKind `destination_deleted`, nothing sent) so the
 * event can settle, and goes to relay.dead. A destination that answers `410 Gone` fails that delivery
 * without retries and is disabled (`disabledReason: "gone"`), so its later jobs are held in the same way.
 *
 * An ordered destination (`ordering: "source"`) sends one job per source at a time: a job admitted to
 * its source's line waits in the store behind the head (its record committed, so other sources on the
 * partition go on) until the head is delivered or finally failed, retries included; then it is
 * published back to the topic and sent.
 */
export function createDeliverer(options: DelivererOptions): Deliverer {
  const now = options.now ?? Date.now;
  const { broker, metrics, logger } = options;
  const lookup = createCachedLookup(options.lookup, { ttlMs: options.lookupCacheTtlMs, now });
  const rateLimiters = options.sharedRateWindows ? createSharedRateLimiters(options.sharedRateWindows) : createDestinationRateLimiters();
  const maxInFlightPerDestination = options.maxInFlightPerDestination ?? DEFAULT_CONNECTIONS_PER_ORIGIN;
  const maxInFlightPerSource = options.maxInFlightPerSource ?? maxInFlightPerDestination;
  // Checked here rather than at a source's first batch; places beyond the destination's could never be filled.
  if (!Number.isInteger(maxInFlightPerSource) || maxInFlightPerSource < 1 || maxInFlightPerSource > maxInFlightPerDestination) {
    throw new RangeError(`maxInFlightPerSource must be an integer from 1 to maxInFlightPerDestination (${maxInFlightPerDestination}), got ${maxInFlightPerSource}`);
  }
  const maxInFlight = options.maxInFlight ?? 256;
  const inFlight = createInFlightLimits({ maxInFlight, maxInFlightPerDestination, metrics });
  const reporter = createAttemptReporter({
    producer: broker.producer(),
    metrics,
    jitter: { jitter: options.jitter, random: options.random },
    now,
  });
  /** Set by the first `stop`; handlers take no new job from then on. */
  let stopping: Promise<void> | null = null;
  const isStopping = () => stopping !== null;
  let running: { destinations: Consumer; destinationHolds: PauseHolds; lanes: Consumer; retries: Consumer; retryHolds: PauseHolds } | null = null;
  let cancelSubscriptionRefresh: (() => void) | undefined;
  let cancelIdleSweep: (() => void) | undefined;
  const schedule = options.schedule ?? unrefSchedule;

  const breakers = createCircuitBreakers({
    ...options.breakerOptions,
    schedule,
    now,
    onStateChange(destinationId, state) {
      if (state === 'open') logger.warn({ destinationId }, 'Circuit opened: deliveries to this destination are paused');
      else logger.info({ destinationId, state }, 'Circuit no longer open: deliveries to this destination resume');
      for (const each of CIRCUIT_STATES) metrics.circuitState.set({ destination: destinationId, state: each }, each === state ? 1 : 0);
      options.onCircuitChange?.(destinationId, state);
      const holds = running?.destinationHolds;
      if (!holds) return;
      // Paused until half open: the trial attempt then comes from the topic itself.
      if (state === 'open') holds.hold({ topic: destinationTopic(destinationId) }, HOLD.circuitOpen);
      else holds.release({ topic: destinationTopic(destinationId) }, HOLD.circuitOpen);
    },
  });

  /**
   * A changed destination starts over with a closed circuit and a full rate budget: the change (a new
   * URL, credentials, limit) is usually what was meant to fix it, and a deleted one needs neither.
   */
  function resetDestination(destinationId: string): void {
    breakers.forget(destinationId);
    rateLimiters.forget(destinationId);
    removeCircuitSeries(destinationId);
    running?.destinationHolds.release({ topic: destinationTopic(destinationId) }, HOLD.circuitOpen);
  }

  function removeCircuitSeries(destinationId: string): void {
    for (const state of CIRCUIT_STATES) metrics.circuitState.remove({ destination: destinationId, state });
  }

  /**
   * What is per destination in memory lasts only while the destination is sent to: a breaker that counts
   * nothing any more and a bucket refilled to capacity are as new, so they are dropped (and made again by
   * the next job), as is a closed circuit's gauge. Their in-flight places go with their last answer.
   */
  function sweepIdleState(): void {
    for (const destinationId of breakers.evictIdle()) removeCircuitSeries(destinationId);
    rateLimiters.evictIdle(now());
    cancelIdleSweep = schedule(sweepIdleState, IDLE_STATE_SWEEP_MS);
  }

  /**
   * A destination's own topic, made before its first job goes there (parked, or an ordered destination's):
   * a pattern subscription covers only topics that exist. Topics made here are remembered.
   */
  const ownTopics = new Set<string>();
  async function ensureOwnTopic(topic: string): Promise<boolean> {
    if (ownTopics.has(topic)) return false;
    await broker.admin().ensureTopics([{ topic, partitions: DESTINATION_PARTITIONS }]);
    ownTopics.add(topic);
    return true;
  }

  /**
   * Jobs of the lanes that must wait, moved to their destination's own topic: the destination group takes
   * a topic made for them in at once (a rebalance on Kafka, behind, while they wait for their hold anyway).
   */
  async function park(topic: string, records: BrokerRecord[]): Promise<void> {
    if (await ensureOwnTopic(topic)) {
      running?.destinations.refreshSubscription().catch((error: unknown) => logger.warn({ err: error, topic }, 'destination subscription refresh failed'));
    }
    await broker.producer().send(topic, records.map(({ key, value, headers }) => ({ key, value, headers })));
  }

  /**
   * The safety net for destination topics that appeared without a config change reaching here: the next
   * look is scheduled once this one is done, so a slow one (a rebalance on Kafka) never overlaps the next.
   */
  function refreshSubscriptionLater(destinations: Consumer): void {
    cancelSubscriptionRefresh = schedule(() => {
      destinations
        .refreshSubscription()
        .catch((error: unknown) => logger.warn({ err: error }, 'destination subscription refresh failed'))
        .finally(() => {
          if (!isStopping()) refreshSubscriptionLater(destinations);
        });
    }, options.subscriptionRefreshMs ?? 30_000);
  }

  /**
   * Jobs waiting in the lines of a destination no longer ordered (or deleted) go back to its topic in
   * line order, to be sent (or failed) without waiting for their heads.
   */
  async function releaseUnorderedLines(destinationId: string | undefined): Promise<void> {
    const released = await options.lines.releaseUnordered(destinationId, async (jobs) => {
      for (const waiting of jobs) await reporter.requeue(waiting.job, waiting.body);
    });
    if (released > 0) logger.info({ destinationId, released }, 'Destination no longer ordered: the jobs waiting in its lines are published again');
  }

  return {
    async start() {
      if (stopping) throw new Error('A stopped deliverer has closed its sender and cannot start again');
      if (running) return;
      const read = new Set([...RETRY_TIER_TOPICS, DEAD_LETTER_TOPIC, LANES_TOPIC]);
      await broker.admin().ensureTopics(CORE_TOPICS.filter(({ topic }) => read.has(topic)));
      // The handlers pause their own consumer, so they are made once it exists (before it starts).
      let handleDestinationBatch: ReturnType<typeof createDestinationBatchHandler> | undefined;
      let handleRetryBatch: ((batch: RecordBatch) => Promise<BatchOutcome>) | undefined;
      let handleLaneBatch: ((batch: RecordBatch) => Promise<BatchOutcome>) | undefined;
      const destinations = broker.consumer({
        groupId: DELIVERER_GROUP,
        topicPattern: DESTINATION_TOPIC_PATTERN,
        fromBeginning: true,
        // Every partition may have requests in flight; the in-flight limits bound the requests themselves.
        concurrency: options.maxInFlight ?? 256,
        handleBatch: (batch) => handleDestinationBatch!(batch),
      });
      // A group of its own, whose subscription never changes: the lanes flow while the destination
      // group rebalances to take an ordered or a parked destination's topic in.
      const lanes = broker.consumer({
        groupId: LANES_GROUP,
        topics: [LANES_TOPIC, FRESH_TOPIC],
        fromBeginning: true,
        concurrency: LANES_PARTITIONS,
        handleBatch: (batch) => handleLaneBatch!(batch),
      });
      const retries = broker.consumer({
        groupId: RETRY_GROUP,
        topics: [...RETRY_TIER_TOPICS],
        fromBeginning: true,
        concurrency: RETRY_TIER_TOPICS.length * DESTINATION_PARTITIONS,
        handleBatch: (batch) => handleRetryBatch!(batch),
      });
      const destinationHolds = new PauseHolds(destinations, options.schedule);
      const retryHolds = new PauseHolds(retries, options.schedule);
      handleDestinationBatch = createDestinationBatchHandler({
        lookup,
        breakers,
        rateLimiters,
        inFlight,
        holds: destinationHolds,
        sender: options.sender,
        reporter,
        lines: options.lines,
        async destinationGone(target) {
          if (!(await options.gone.disable(target.orgId, target.id, now()))) return;
          metrics.destinationsGone.inc({ destination: target.id });
          logger.warn({ destinationId: target.id }, 'Destination answered 410 Gone: disabled, its jobs are held until it is enabled again');
        },
        logger,
        now,
        stopping: isStopping,
        disabledRecheckMs: options.lookupCacheTtlMs ?? 60_000,
        maxInFlightPerSource,
        secrets: options.secrets,
        tracer: options.tracer,
      });
      handleLaneBatch = createLaneJobsHandler({
        handleDestinationBatch,
        park,
        maxRecordsInFlightPerDestination: LANE_RECORDS_PER_DESTINATION_PLACE * maxInFlightPerDestination,
        maxRecordsInFlight: LANE_RECORDS_PER_PROCESS_PLACE * maxInFlight,
        logger,
      });
      handleRetryBatch = createRetryTierHandler({ producer: broker.producer(), reporter, holds: retryHolds, now, stopping: isStopping, tracer: options.tracer });
      running = { destinations, destinationHolds, lanes, retries, retryHolds };
      // Heads of ordered lines a stopped process made but did not publish: published now (again, at worst).
      for (const head of await options.lines.unpublishedHeads()) {
        await reporter.requeue(head.job, head.body);
        await options.lines.published(head.job.deliveryId);
      }
      // Lines of destinations switched to `none` or deleted while no deliverer was there to let them go.
      await releaseUnorderedLines(undefined);
      await Promise.all([destinations.start(), lanes.start(), retries.start()]);
      refreshSubscriptionLater(destinations);
      cancelIdleSweep = schedule(sweepIdleState, IDLE_STATE_SWEEP_MS);
    },

    stop() {
      stopping ??= (async () => {
        cancelSubscriptionRefresh?.();
        cancelIdleSweep?.();
        const current = running;
        if (current) {
          // The lanes' stop waits for the attempts they handed over (answered or timed out) before the sender closes.
          await Promise.all([current.destinations.stop(), current.lanes.stop(), current.retries.stop()]);
          current.destinationHolds.clear();
          current.retryHolds.clear();
          running = null;
        }
        breakers.shutdown();
        await options.sender.close();
      })();
      return stopping;
    },

    async refresh(change) {
      // Another deliverer's breaker (or this one's, heard back): one state per destination across them.
      // Half open is each process's own trial and is not taken on.
      if (change?.kind === 'circuit') {
        if (change.state !== 'half_open') breakers.adopt(change.destinationId, change.state);
        return;
      }
      if (change && change.kind !== 'destination' && change.kind !== 'organization') return;
      const destinationId = change?.kind === 'destination' && change.id !== '*' ? change.id : undefined;
      lookup.invalidate(destinationId);
      // Only a secret changed: the next lookup opens the new one; breakers, holds and topics stay.
      if (change?.action === 'rotated') return;
      if (destinationId && change?.action !== 'created') resetDestination(destinationId);
      const holds = running?.destinationHolds;
      if (holds) {
        // Looked up again on the next batch: held again if still disabled, delivered if enabled, failed if deleted.
        const held = destinationId ? [{ topic: destinationTopic(destinationId) }] : holds.heldFor(HOLD.disabled);
        for (const target of held) holds.release(target, HOLD.disabled);
      }
      // An ordered destination's jobs go to its own topic, which a pattern subscription covers only once it
      // exists: made now rather than with its first job, unseen until the next refresh.
      if (destinationId && change?.kind === 'destination' && (change.action === 'created' || change.action === 'updated')) {
        const target = await lookup.destination(change.orgId, destinationId);
        if (target?.ordering === 'source') await ensureOwnTopic(destinationTopic(destinationId));
      }
      if (running && change?.action !== 'created') await releaseUnorderedLines(destinationId);
      await running?.destinations.refreshSubscription();
    },

    circuitState: (destinationId) => breakers.circuitState(destinationId),
  };
}
