import { logFields, type RelayTracer } from '../../libs/tracing/relay-tracer.js';
import type { Broker } from '../../libs/broker/broker.js';
import type { CircuitState } from '../../libs/delivery/circuit-breakers.js';
import type { DeliveryLookup } from '../../libs/delivery/delivery-lookup.js';
import type { JitterOptions } from '../../libs/delivery/retry-schedule.js';
import { DEFAULT_CONNECTIONS_PER_ORIGIN } from '../../libs/delivery/send-request.js';
import type { TargetSender } from '../../libs/delivery/target-port.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import { unrefSchedule, type Schedule } from '../../libs/time/schedule.js';
import { createAttemptReporter, type AttemptReporter } from './attempt-reporter.js';
import { createCachedLookup, type CachedLookup } from './cached-lookup.js';
import { createDestinationBatchHandler, HOLD, type DelivererLogger } from './destination-batch.js';
import { createDestinationChecks, type CheckOptions, type DestinationChecks } from './destination-checks.js';
import type { GoneDestinations } from './gone-destinations.js';
import { createInFlightLimits } from './in-flight-limits.js';
import { createJobIntake, type IntakeHandlers, type JobIntake, type RunningIntake } from './job-intake.js';
import { createLaneJobsHandler } from './lane-jobs.js';
import { createRetryTierHandler } from './retry-tiers.js';
import { FinishedAttempts } from './finished-attempts.js';
import type { DeliveredJournal } from './delivered-journal.js';
import type { SourceLines } from '../../libs/ordering/source-lines.js';

export { IDLE_STATE_SWEEP_MS } from './destination-checks.js';

/**
 * A destination may have this many jobs per connection place in flight from the lanes (1,024 by default);
 * beyond that (it hangs or cannot keep up) its jobs are parked in its own topic instead. Not fewer: a
 * healthy destination's moment of slowness (at 800/s, 4 per place parked jobs of a warming relay, whose
 * topic then waited ~4 s for the group to take it in) should slow it, not park it.
 */
const LANE_RECORDS_PER_DESTINATION_PLACE = 16;
/** Jobs of all destinations in flight from the lanes, per place of the process (16,384 by default): past it the lanes wait. */
const LANE_RECORDS_PER_PROCESS_PLACE = 64;
/** Deliveries whose last attempt here is remembered (about 1.5 MB): seconds of jobs even at thousands a second. */
const FINISHED_ATTEMPTS_KEPT = 16_384;

/** What the deliverer reads and writes of configuration. */
export interface DestinationAccess {
  /** Over the store and the secret box: `createStoreDeliveryLookup(store, secrets)`. Cached here. */
  lookup: DeliveryLookup;
  /** Safety net for missed config changes (default 60 s). */
  lookupCacheTtlMs?: number;
  /** Disables destinations that answer `410 Gone`: `createGoneDestinations(sql, announce)`. */
  gone: GoneDestinations;
  /** The lines of ordered destinations (`ordering: "source"`): `createSqlSourceLines(sql, deadLetters)`. */
  lines: SourceLines;
  /** Opens bodies the gateway sealed before they reached the log (sources with `encryptFields`). */
  secrets: SecretBox;
  /** Of these deliveries, the ones stored delivered: `(ids) => deliveredAmong(sql, ids)`. */
  delivered(deliveryIds: readonly string[]): Promise<ReadonlySet<string>>;
}

/** How attempts go out, and how many at once. */
export interface SendingOptions {
  /** One implementation per destination type (libs/delivery/target-port.ts). Closed by `stop`. */
  sender: TargetSender;
  /** Delivery requests in flight in the process (default 256). */
  maxInFlight?: number;
  /** Delivery requests in flight to one destination (default: the HTTP sender's connections per origin, 64). */
  maxInFlightPerDestination?: number;
  /**
   * Jobs of one source to one destination in flight at once, started in the order received
   * (`RELAY_MAX_IN_FLIGHT_PER_SOURCE`; default and at most `maxInFlightPerDestination`). 1 sends the
   * next one only after the previous one's answer.
   */
  maxInFlightPerSource?: number;
}

export interface DelivererOptions {
  broker: Broker;
  destinations: DestinationAccess;
  sending: SendingOptions;
  checks?: CheckOptions;
  /** Fraction of each retry delay added or removed at random (`RELAY_RETRY_JITTER`). */
  retries: JitterOptions;
  /**
   * Delivered attempts written down as they are answered, and read from earlier processes' (the
   * embedded log's data directory, which one process owns): none where deliverers share no disk. Closed
   * with the sender on stop.
   */
  journal?: DeliveredJournal;
  /** Metrics, logs, and the attempts' and retry waits' spans. */
  observe: { metrics: RelayMetrics; logger: DelivererLogger; tracer: RelayTracer };
  clock?: {
    now?: () => number;
    /**
     * The timers of the pauses (rate budget, disabled recheck, retry tier due times), the breakers' resets,
     * the idle-state sweep and the subscription refresh; tests advance their own.
     */
    schedule?: Schedule;
    /** Safety net for destination topics that appeared without a config change or a parking here (default 30 s). */
    subscriptionRefreshMs?: number;
  };
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
   * on the breaker states other deliverers announce. The composition root calls it for each record of relay.config.
   */
  refresh(change?: ConfigChange): Promise<void>;
  /** For the destination and health views. */
  circuitState(destinationId: string): CircuitState;
}

/** The in-flight limits with their defaults, checked here rather than at a source's first batch. */
function inFlightSettings(sending: SendingOptions) {
  const maxInFlightPerDestination = sending.maxInFlightPerDestination ?? DEFAULT_CONNECTIONS_PER_ORIGIN;
  const maxInFlightPerSource = sending.maxInFlightPerSource ?? maxInFlightPerDestination;
  // Places beyond the destination's could never be filled.
  if (!Number.isInteger(maxInFlightPerSource) || maxInFlightPerSource < 1 || maxInFlightPerSource > maxInFlightPerDestination) {
    throw new RangeError(`maxInFlightPerSource must be an integer from 1 to maxInFlightPerDestination (${maxInFlightPerDestination}), got ${maxInFlightPerSource}`);
  }
  return { maxInFlight: sending.maxInFlight ?? 256, maxInFlightPerDestination, maxInFlightPerSource };
}

/** The parts of a deliverer, made once and shared by its handlers and its config changes. */
interface Parts {
  options: DelivererOptions;
  lookup: CachedLookup;
  reporter: AttemptReporter;
  checks: DestinationChecks;
  intake: JobIntake;
  now: () => number;
  isStopping: () => boolean;
}

/**
 * The delivery consumer, in four parts read in order: taking jobs (job-intake.ts: the lanes, destination
 * topics and retry tiers in), checking the destination (destination-checks.ts and destination-batch.ts:
 * breaker, rate budget, disabled hold, ordered lines), sending (libs/delivery/target-port.ts: one sender
 * per destination type) and reporting the outcome (attempt-reporter.ts: every attempt to relay.attempts,
 * retries through the relay.retry.<tier> topics, exhausted jobs to relay.dead).
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
  const { broker } = options;
  const { metrics, logger } = options.observe;
  const now = options.clock?.now ?? Date.now;
  const limits = inFlightSettings(options.sending);
  let stopping: Promise<void> | null = null;
  const parts: Parts = {
    options,
    lookup: createCachedLookup(options.destinations.lookup, { ttlMs: options.destinations.lookupCacheTtlMs, now }),
    reporter: createAttemptReporter({ producer: broker.producer(), metrics, jitter: options.retries, now, journal: options.journal }),
    checks: createDestinationChecks(options.checks ?? {}, { metrics, logger, now, schedule: options.clock?.schedule ?? unrefSchedule }),
    intake: createJobIntake({ broker, logger, schedule: options.clock?.schedule, concurrency: limits.maxInFlight, subscriptionRefreshMs: options.clock?.subscriptionRefreshMs }),
    now,
    isStopping: () => stopping !== null,
  };
  const { intake, checks } = parts;

  return {
    async start() {
      if (stopping) throw new Error('A stopped deliverer has closed its sender and cannot start again');
      if (intake.running()) return;
      const running = await intake.open((opened) => handlersFor(parts, opened, limits));
      checks.attach(running.destinationHolds);
      await publishLeftoverLines(parts);
      await intake.start();
      checks.startIdleSweep();
    },

    stop() {
      stopping ??= (async () => {
        await intake.stop();
        checks.attach(null);
        checks.shutdown();
        await options.sending.sender.close();
        options.journal?.close();
      })();
      return stopping;
    },

    refresh: (change) => applyConfigChange(parts, change),

    circuitState: (destinationId) => checks.breakers.circuitState(destinationId),
  };
}

/** The batch handlers of the three consumers, over the shared parts. */
function handlersFor(parts: Parts, running: RunningIntake, limits: ReturnType<typeof inFlightSettings>): IntakeHandlers {
  const { options, lookup, reporter, checks, intake, now, isStopping } = parts;
  const { metrics, logger } = options.observe;
  const startedAt = now();
  const destinations = createDestinationBatchHandler({
    lookup,
    breakers: checks.breakers,
    rateLimiters: checks.rateLimiters,
    inFlight: createInFlightLimits({ maxInFlight: limits.maxInFlight, maxInFlightPerDestination: limits.maxInFlightPerDestination, metrics }),
    holds: running.destinationHolds,
    sender: options.sending.sender,
    reporter,
    lines: options.destinations.lines,
    async destinationGone(target, attempt) {
      if (!(await options.destinations.gone.disable(target.orgId, target.id, now()))) return;
      metrics.destinationsGone.inc({ destination: target.id });
      logger.warn({ destinationId: target.id, ...logFields(attempt) }, 'Destination answered 410 Gone: disabled, its jobs are held until it is enabled again');
    },
    logger,
    tracer: options.observe.tracer,
    now,
    stopping: isStopping,
    disabledRecheckMs: options.destinations.lookupCacheTtlMs ?? 60_000,
    maxInFlightPerSource: limits.maxInFlightPerSource,
    secrets: options.destinations.secrets,
    finished: new FinishedAttempts(FINISHED_ATTEMPTS_KEPT),
    journal: options.journal,
    // Only an event received before this deliverer started can have had a job sent by one before it.
    deliveredBefore: (jobs) => options.destinations.delivered(jobs.filter((job) => job.receivedAt < startedAt).map((job) => job.deliveryId)),
  });
  return {
    destinations,
    lanes: createLaneJobsHandler({
      handleDestinationBatch: destinations,
      park: (topic, records) => intake.park(topic, records),
      maxRecordsInFlightPerDestination: LANE_RECORDS_PER_DESTINATION_PLACE * limits.maxInFlightPerDestination,
      maxRecordsInFlight: LANE_RECORDS_PER_PROCESS_PLACE * limits.maxInFlight,
      logger,
    }),
    retries: createRetryTierHandler({ producer: options.broker.producer(), reporter, holds: running.retryHolds, now, stopping: isStopping, tracer: options.observe.tracer }),
  };
}

/**
 * At start: heads of ordered lines a stopped process made but did not publish are published now (again,
 * at worst), and lines of destinations switched to `none` or deleted while no deliverer ran are let go.
 */
async function publishLeftoverLines(parts: Parts): Promise<void> {
  const { lines } = parts.options.destinations;
  for (const head of await lines.unpublishedHeads()) {
    await parts.reporter.requeue(head.job, head.body);
    await lines.published(head.job.deliveryId);
  }
  await releaseUnorderedLines(parts, undefined);
}

/**
 * Jobs waiting in the lines of a destination no longer ordered (or deleted) go back to its topic in
 * line order, to be sent (or failed) without waiting for their heads.
 */
async function releaseUnorderedLines(parts: Parts, destinationId: string | undefined): Promise<void> {
  const released = await parts.options.destinations.lines.releaseUnordered(destinationId, async (jobs) => {
    for (const waiting of jobs) await parts.reporter.requeue(waiting.job, waiting.body);
  });
  if (released > 0) parts.options.observe.logger.info({ destinationId, released }, 'Destination no longer ordered: the jobs waiting in its lines are published again');
}

/** `Deliverer.refresh`: one relay.config change applied to the caches, breakers, holds, sender and lines. */
async function applyConfigChange(parts: Parts, change: ConfigChange | undefined): Promise<void> {
  const { options, lookup, checks, intake } = parts;
  // Another deliverer's breaker (or this one's, heard back): one state per destination across them.
  // Half open is each process's own trial and is not taken on.
  if (change?.kind === 'circuit') {
    if (change.state !== 'half_open') checks.breakers.adopt(change.destinationId, change.state);
    return;
  }
  if (change && change.kind !== 'destination' && change.kind !== 'organization') return;
  const destinationId = change?.kind === 'destination' && change.id !== '*' ? change.id : undefined;
  lookup.invalidate(destinationId);
  // Only a secret changed: the next lookup opens the new one; breakers, holds and topics stay.
  if (change?.action === 'rotated') return;
  if (destinationId && change?.action !== 'created') {
    checks.reset(destinationId);
    await options.sending.sender.forget(destinationId);
  }
  const running = intake.running();
  if (running) {
    // Looked up again on the next batch: held again if still disabled, delivered if enabled, failed if deleted.
    const held = destinationId ? [{ topic: destinationTopic(destinationId) }] : running.destinationHolds.heldFor(HOLD.disabled);
    for (const target of held) running.destinationHolds.release(target, HOLD.disabled);
  }
  // An ordered destination's jobs go to its own topic, which a pattern subscription covers only once it
  // exists: made now rather than with its first job, unseen until the next refresh.
  if (destinationId && change?.kind === 'destination' && (change.action === 'created' || change.action === 'updated')) {
    const target = await lookup.destination(change.orgId, destinationId);
    if (target?.ordering === 'source') await intake.ensureOwnTopic(destinationTopic(destinationId));
  }
  if (running && change?.action !== 'created') await releaseUnorderedLines(parts, destinationId);
  await running?.refreshSubscription();
}
