import type { BatchOutcome, BrokerRecord, RecordBatch } from '../../libs/broker/broker.js';
import { isGone, type AttemptOutcome } from '../../libs/delivery/attempt-outcome.js';
import { recordLogFields, recordTraceparent } from '../../libs/tracing/record-trace.js';
import { endFailed, SpanKind, traceparentOf, type RelayTracer, type Span } from '../../libs/tracing/relay-tracer.js';
import { buildDeliveryRequest, type DeliveryRequest } from '../../libs/delivery/build-request.js';
import type { CircuitBreakers } from '../../libs/delivery/circuit-breakers.js';
import type { TargetSender } from '../../libs/delivery/target-port.js';
import type { DestinationRateLimiters } from '../../libs/delivery/token-bucket.js';
import type { Logger } from '../../libs/logging/logger.js';
import { decodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { openStoredPayload } from '../../libs/payload/stored-payload.js';
import { isDependencyFailure } from '../../libs/pipeline/poison-records.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { AttemptReporter } from './attempt-reporter.js';
import { KeyedConcurrencyLimits } from '../../libs/concurrency/concurrency-limit.js';
import type { DeliveryTarget } from '../../libs/delivery/delivery-lookup.js';
import type { CachedLookup } from './cached-lookup.js';
import type { InFlightLimits } from './in-flight-limits.js';
import type { PauseHolds } from './pause-holds.js';
import type { SourceLines } from '../../libs/ordering/source-lines.js';
import type { FinishedAttempts } from './finished-attempts.js';
import type { DeliveredJournal } from './delivered-journal.js';
import type { AttemptRecord } from '../../libs/pipeline/attempt-record.js';

export type DelivererLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/** Why a destination topic is paused. None of them uses up a retry: they are backpressure, not attempts. */
export const HOLD = {
  rateLimited: 'rate_limited',
  circuitOpen: 'circuit_open',
  disabled: 'destination_disabled',
} as const;

export interface DestinationBatchDeps {
  lookup: CachedLookup;
  breakers: CircuitBreakers;
  rateLimiters: DestinationRateLimiters;
  inFlight: Pick<InFlightLimits, 'acquire'>;
  holds: PauseHolds;
  /** The sending port: one implementation per destination type. */
  sender: Pick<TargetSender, 'send'>;
  reporter: AttemptReporter;
  /** Each source's line to an ordered destination. */
  lines: SourceLines;
  /** Called after a `410 Gone` is recorded (its line names the attempt's span); resolves once the destination is disabled. */
  destinationGone(target: DeliveryTarget, attempt: Span): Promise<void>;
  logger: DelivererLogger;
  /** The attempts' spans. */
  tracer: RelayTracer;
  now: () => number;
  stopping(): boolean;
  /** A disabled destination's topic is looked at again after this, should its re-enabling go unannounced. */
  disabledRecheckMs: number;
  /** Requests of one source (record key) awaiting their answers at once; 1 = each waits for the previous answer. */
  maxInFlightPerSource: number;
  /** Opens bodies sealed in the log (jobs of sources with `encryptFields`). */
  secrets: SecretBox;
  /**
   * Of these jobs, those whose delivery is stored delivered by an earlier process (killed after the
   * attempt, before its record was committed); asked once a batch.
   */
  deliveredBefore(jobs: readonly DeliveryJob[]): Promise<ReadonlySet<string>>;
  /** The attempts finished here lately, or in flight: a job published or read again for one of them is not sent again. */
  finished: FinishedAttempts<TaskResult>;
  /** The delivered attempts deliverers before this one answered, whether or not they published them. */
  journal?: Pick<DeliveredJournal, 'earlier'>;
}

type TaskResult = 'done' | 'circuit_open';

/** The attempt's span ends with its answer: the status code, or the error that took its place. */
function endAttemptSpan(span: Span, outcome: AttemptOutcome): void {
  if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
  if (outcome.ok) return void span.end();
  if (outcome.errorKind) span.setAttribute('error.type', outcome.errorKind);
  endFailed(span, new Error(outcome.error ?? `HTTP ${outcome.statusCode}`));
}

/** A record's work once started (`task`), and whether the records after it must wait for a later batch. */
interface Launch {
  task?: Promise<TaskResult>;
  stop: boolean;
}

const STOP: Launch = { stop: true };
/** Nothing to send, and the records after it go on. */
const NOTHING_TO_SEND: Launch = { task: Promise.resolve('done'), stop: false };

/** A record of the batch with its job decoded once, or the reason it could not be. */
export type ReadRecord = { record: BrokerRecord; decoded: { job: DeliveryJob; body: Buffer }; error?: undefined } | { record: BrokerRecord; decoded?: undefined; error: unknown };

export function readRecords(records: readonly BrokerRecord[]): ReadRecord[] {
  return records.map((record) => {
    try {
      return { record, decoded: decodeDeliveryJob(record) };
    } catch (error) {
      return { record, error };
    }
  });
}

function providerHeadersOf(job: DeliveryJob): Record<string, string> {
  return Object.fromEntries(Object.entries(job.providerHeaders).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
}

/**
 * A window per record key (source): a place is taken before the request and given back with its answer.
 * Kept per destination topic while any of its batches runs: a destination topic's batches of one key
 * come one at a time, but the lanes hand over a destination's parts without waiting for the last one.
 */
type SourceWindows = KeyedConcurrencyLimits<string | null>;

function holdForOpenCircuit(deps: DestinationBatchDeps, topic: string, destinationId: string): void {
  deps.holds.hold({ topic }, HOLD.circuitOpen);
  // Breaker events release this hold; one that closed the circuit before the hold was taken cannot.
  if (deps.breakers.circuitState(destinationId) === 'closed') deps.holds.release({ topic }, HOLD.circuitOpen);
}

/** The head of an ordered line is done: the job behind it goes back to the topic, and is sent next. */
async function nextInLine(deps: DestinationBatchDeps, job: DeliveryJob): Promise<void> {
  const next = await deps.lines.advance(job);
  if (!next) return;
  await deps.reporter.requeue(next.job, next.body);
  await deps.lines.published(next.job.deliveryId);
}

/** Held like any disabled destination; the lookup forgets it, so the records after this one see it disabled. */
async function stopForGone(deps: DestinationBatchDeps, topic: string, target: DeliveryTarget, attempt: Span): Promise<void> {
  await deps.destinationGone(target, attempt);
  deps.lookup.invalidate(target.id);
  deps.holds.hold({ topic }, HOLD.disabled, deps.disabledRecheckMs);
}

async function send(deps: DestinationBatchDeps, target: DeliveryTarget, request: DeliveryRequest, job: DeliveryJob, release: () => void) {
  const context = { deliveryId: job.deliveryId, attemptNumber: job.attemptNumber, eventId: job.eventId, sourceId: job.sourceId };
  const startedAt = deps.now();
  const guarded = await deps.breakers.run(target.id, () => deps.sender.send(request, target, context)).finally(release);
  return { guarded, startedAt };
}

/** Waits for a place in the record's source window, then in the destination's and the process's limits. */
async function placesFor(deps: DestinationBatchDeps, record: BrokerRecord, destinationId: string, windows: SourceWindows): Promise<() => void> {
  const releaseSourcePlace = await windows.acquire(record.key);
  const releaseInFlight = await deps.inFlight.acquire(destinationId);
  return () => {
    releaseInFlight();
    releaseSourcePlace();
  };
}

/** This attempt's message: signed afresh, with a sealed body opened. Throws for a job no request can be built from. */
function requestFor(deps: DestinationBatchDeps, job: DeliveryJob, body: Buffer, target: DeliveryTarget, sourceSlug: string | undefined, span: Span): DeliveryRequest {
  return buildDeliveryRequest({
    destination: target.destination,
    event: {
      eventId: job.eventId,
      sourceId: job.sourceId,
      sourceSlug,
      rawBody: job.sealed ? openStoredPayload(body, true, deps.secrets) : body,
      contentType: job.contentType,
      providerHeaders: providerHeadersOf(job),
      signatureValid: job.signatureValid,
    },
    deliveryId: job.deliveryId,
    attemptNumber: job.attemptNumber,
    nowMs: deps.now(),
    traceparent: traceparentOf(span),
  });
}

/** Sends through the breaker, then reports the outcome (attempt, retry or dead letter) and moves an ordered line on. */
async function sendAndReport(deps: DestinationBatchDeps, topic: string, { job, body }: { job: DeliveryJob; body: Buffer }, target: DeliveryTarget, request: DeliveryRequest, release: () => void, span: Span): Promise<TaskResult> {
  const { guarded, startedAt } = await send(deps, target, request, job, release);
  if (guarded.kind === 'circuit_open') {
    span.setAttribute('relay.circuit_open', true).end();
    holdForOpenCircuit(deps, topic, target.id);
    return 'circuit_open';
  }
  endAttemptSpan(span, guarded.outcome);
  const status = await deps.reporter.sent({ job, body, target, outcome: guarded.outcome, startedAt, span });
  if (isGone(guarded.outcome)) await stopForGone(deps, topic, target, span);
  if (target.ordering === 'source' && status !== 'retrying') await nextInLine(deps, job);
  deps.finished.add(job);
  return 'done';
}

/** An earlier process's delivered attempt, published in its stead: the job is done without a second request. */
async function publishJournaled(deps: DestinationBatchDeps, job: DeliveryJob, attempt: AttemptRecord): Promise<TaskResult> {
  await deps.reporter.journaled(attempt);
  deps.finished.add(job);
  return 'done';
}

/**
 * This job's attempt finished here (nothing to send) or in flight here (the job ends as that one does): the
 * job was read again, or is the router's second one. Checked again just before sending, with no wait between.
 */
function sameAttemptHere(deps: DestinationBatchDeps, job: DeliveryJob): Launch | undefined {
  if (deps.finished.covers(job)) return NOTHING_TO_SEND;
  const running = deps.finished.running(job);
  return running ? { task: running, stop: false } : undefined;
}

async function launch(deps: DestinationBatchDeps, batch: RecordBatch, { record, decoded, error: unreadable }: ReadRecord, windows: SourceWindows, delivered: ReadonlySet<string>): Promise<Launch> {
  if (deps.stopping()) return STOP;
  const topic = batch.topic;
  /** A record that cannot be delivered for a reason of its own goes to relay.dead; the batch goes on. */
  const poisoned = (error: unknown, job?: DeliveryJob): Launch => {
    if (isDependencyFailure(error)) throw error;
    deps.logger.error({ topic, partition: batch.partition, offset: record.offset, ...recordLogFields(record), err: error }, 'Undeliverable delivery job sent to relay.dead');
    return { task: deps.reporter.poisoned(record, error, job).then(() => 'done'), stop: false };
  };
  if (!decoded) return poisoned(unreadable);
  const { job, body } = decoded;
  const target = await deps.lookup.destination(job.orgId, job.destinationId);
  if (!target) {
    // Its line, if it had one, moves on: each job behind fails the same way in turn.
    return { task: deps.reporter.destinationDeleted(job, body).then(() => nextInLine(deps, job)).then(() => 'done'), stop: false };
  }
  if (!target.enabled) {
    deps.holds.hold({ topic }, HOLD.disabled, deps.disabledRecheckMs);
    return STOP;
  }
  // An ordered destination's line knows what is done (and a delivered head must still move it on): a job
  // kept behind its source's head, or done before a crash, has nothing to send now. Any other job is done
  // once its delivery is stored delivered or this deliverer finished its attempt, and has its attempt
  // published once an earlier process journaled it delivered.
  if (target.ordering === 'source') {
    if ((await deps.lines.admit(job, body)) !== 'send') return NOTHING_TO_SEND;
  } else {
    if (delivered.has(job.deliveryId)) return NOTHING_TO_SEND;
    const here = sameAttemptHere(deps, job);
    if (here) return here;
    const journaled = deps.journal?.earlier(job);
    if (journaled) return { task: publishJournaled(deps, job, journaled), stop: false };
  }
  // Looked up only for a job published before jobs carried it.
  const sourceSlug = job.sourceSlug ?? (await deps.lookup.sourceSlug(job.orgId, job.sourceId)) ?? undefined;
  const release = await placesFor(deps, record, target.id, windows);
  if (deps.stopping()) {
    release();
    return STOP;
  }
  const waitMs = await deps.rateLimiters.take(target.id, target.rateLimitPerMinute, deps.now());
  if (waitMs > 0) {
    release();
    deps.holds.hold({ topic }, HOLD.rateLimited, waitMs);
    return STOP;
  }
  // Another copy of this job (another partition's, or another consumer's) may have been sent while this one waited.
  const meanwhile = sameAttemptHere(deps, job);
  if (meanwhile) {
    release();
    return meanwhile;
  }
  const span = deps.tracer.start('attempt', recordTraceparent(record), {
    kind: SpanKind.CLIENT,
    attributes: { 'relay.destination_id': target.id, 'relay.delivery_id': job.deliveryId, 'relay.attempt': job.attemptNumber },
  });
  let request: DeliveryRequest;
  try {
    request = requestFor(deps, job, body, target, sourceSlug, span);
  } catch (error) {
    release();
    endFailed(span, error);
    return poisoned(error, job);
  }
  // Open or half open: at most one trial gets through, so nothing starts until this one is answered.
  // The state is read in the same synchronous step as the breaker's own decision in `run`.
  const trial = deps.breakers.circuitState(target.id) !== 'closed';
  const task = sendAndReport(deps, topic, { job, body }, target, request, release, span);
  deps.finished.track(job, task);
  if (!trial) return { task, stop: false };
  const result = await task.catch(() => 'failed');
  return { task, stop: result !== 'done' };
}

/**
 * Reports each longer prefix of the batch's tasks that are done (`RecordBatch.progress`): the broker
 * commits it at once, so a crash sends again only what was unanswered, or answered behind it, rather
 * than every answered job of the batch.
 */
function prefixReporter(batch: RecordBatch): (index: number) => void {
  const done: boolean[] = [];
  let prefix = 0;
  return (index) => {
    done[index] = true;
    const before = prefix;
    while (done[prefix]) prefix += 1;
    if (prefix > before) batch.progress?.(prefix);
  };
}

async function handleBatch(deps: DestinationBatchDeps, batch: RecordBatch, read: readonly ReadRecord[], windows: SourceWindows): Promise<BatchOutcome> {
  const tasks: Promise<TaskResult>[] = [];
  const reportDone = prefixReporter(batch);
  let launchError: unknown;
  try {
    const delivered = await deps.deliveredBefore(read.flatMap(({ decoded }) => (decoded ? [decoded.job] : [])));
    for (const record of read) {
      const { task, stop } = await launch(deps, batch, record, windows, delivered);
      if (task) {
        const index = tasks.length;
        // A failure is observed below, once every record is started; until then it must not count as unhandled.
        task.then((result) => result === 'done' && reportDone(index), () => undefined);
        tasks.push(task);
      }
      if (stop) break;
    }
  } catch (error) {
    launchError = error;
  }
  // Never return while work of this batch is still running: the rest may be delivered again at once.
  const settled = await Promise.allSettled(tasks);
  const firstUnfinished = settled.findIndex((result) => result.status === 'rejected' || result.value !== 'done');
  const handled = firstUnfinished === -1 ? tasks.length : firstUnfinished;
  const failure = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected')?.reason ?? launchError;
  if (failure !== undefined) {
    if (handled === 0) throw failure;
    deps.logger.warn({ topic: batch.topic, partition: batch.partition, handled, err: failure }, 'Delivery batch partly failed; the rest is delivered again');
  }
  return { handled };
}

/**
 * The batch handler of the destination topics (all records of a batch are for one destination).
 *
 * Records are started in offset order, so the first attempts of one source (the record key) are sent
 * in the order they were received; up to `maxInFlightPerSource` of them await their answers at once
 * (a window: one round trip per record would cap a source at 1/RTT), while other sources' records are
 * in flight beside them. With a window of 1 a record starts only once the previous one of its source
 * has its answer. Starting stops at the first record that must wait: rate budget spent, circuit open,
 * destination disabled, or shutting down. Its topic is paused (a hold) and the handler returns
 * `{handled: n}` for the records started before it, once their attempts are published; the rest is
 * delivered again after the resume. Since only a prefix is ever started, the committed prefix is
 * exactly the work done, and a wait never costs a job one of its retries. The lanes hand each
 * destination's part of their batches to this same handler (lane-jobs.ts) and park what it did not start.
 */
export function createDestinationBatchHandler(deps: DestinationBatchDeps) {
  const windowsByTopic = new Map<string, { windows: SourceWindows; batches: number }>();

  /** `read`: the batch's records already decoded, in order (the lanes decode them to split a batch). */
  return async function handleDestinationBatch(batch: RecordBatch, read: readonly ReadRecord[] = readRecords(batch.records)): Promise<BatchOutcome> {
    const shared = windowsByTopic.get(batch.topic) ?? { windows: new KeyedConcurrencyLimits(deps.maxInFlightPerSource), batches: 0 };
    shared.batches += 1;
    windowsByTopic.set(batch.topic, shared);
    try {
      return await handleBatch(deps, batch, read, shared.windows);
    } finally {
      shared.batches -= 1;
      if (shared.batches === 0) windowsByTopic.delete(batch.topic);
    }
  };
}
