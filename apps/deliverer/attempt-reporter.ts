import { withTraceparent } from '../../libs/tracing/record-trace.js';
import type { Span } from '../../libs/tracing/relay-tracer.js';
import type { BrokerRecord, OutgoingMessage, Producer } from '../../libs/broker/broker.js';
import { isGone, type AttemptOutcome } from '../../libs/delivery/attempt-outcome.js';
import { nextAttemptPlan, tierFor, type JitterOptions } from '../../libs/delivery/retry-schedule.js';
import { newId } from '../../libs/ids/ids.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { encodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { createDeadLetters, deadLetterOfJob, deadLetterPoison } from '../../libs/pipeline/dead-letter.js';
import { encodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { poisonReason } from '../../libs/pipeline/poison-records.js';
import type { DeliveryTarget } from '../../libs/delivery/delivery-lookup.js';
import { ATTEMPTS_TOPIC, destinationTopic, retryTierTopic } from '../../libs/pipeline/topology.js';
import type { DeliveredJournal } from './delivered-journal.js';

export interface AttemptReporterOptions {
  producer: Producer;
  metrics: RelayMetrics;
  jitter: JitterOptions;
  now: () => number;
  /** Where a delivered attempt is written the moment its answer arrives, before it is published. */
  journal?: Pick<DeliveredJournal, 'write'>;
}

export interface SentAttempt {
  job: DeliveryJob;
  body: Buffer;
  target: DeliveryTarget;
  outcome: AttemptOutcome;
  startedAt: number;
  /** The attempt's span: the recorder's write and the retry continue under it. */
  span: Span;
}

/** `errorKind` of the attempt recorded for a job whose destination was deleted. */
export const DESTINATION_DELETED = 'destination_deleted';
/** `errorKind` of the attempt recorded for a job that cannot be delivered for a reason of its own. */
export const POISON_RECORD = 'poison_record';

function recordOf(job: DeliveryJob, fields: Omit<AttemptRecord, 'attemptId' | 'deliveryId' | 'eventId' | 'orgId' | 'destinationId' | 'attemptNumber'>): AttemptRecord {
  const { deliveryId, eventId, orgId, destinationId, attemptNumber } = job;
  return { attemptId: newId('att'), deliveryId, eventId, orgId, destinationId, attemptNumber, ...fields };
}

/** A failed attempt that sent nothing and ends its delivery (the recorder, sole writer of delivery state, learns it from this). */
async function publishFinalFailure({ producer, metrics, now }: AttemptReporterOptions, job: DeliveryJob, error: string, errorKind: string): Promise<void> {
  const at = now();
  const attempt = recordOf(job, {
    startedAt: at,
    completedAt: at,
    ok: false,
    statusCode: null,
    latencyMs: 0,
    error,
    errorKind,
    responseBody: '',
    deliveryStatus: 'failed',
    nextAttemptAt: null,
  });
  metrics.deliveryAttempts.inc({ destination: job.destinationId, outcome: 'failed' });
  await producer.send(ATTEMPTS_TOPIC, [encodeAttemptRecord(attempt)]);
}

/**
 * The fourth part of the deliverer, reporting the outcome: publishes what became of an attempt. The
 * AttemptRecord goes first and the retry job or dead letter only after it is durable, so the recorder
 * never sees attempt n+1 before attempt n.
 */
export function createAttemptReporter(options: AttemptReporterOptions) {
  const { producer, metrics, now } = options;

  const publish = (topic: string, messages: OutgoingMessage[]) => producer.send(topic, messages);

  const deadLetter = createDeadLetters(publish, metrics.deadLetters);

  return {
    /**
     * An attempt that reached the sender: recorded, then retried through a tier or dead-lettered.
     * Resolves with the delivery's status after it.
     */
    async sent({ job, body, target, outcome, startedAt, span }: SentAttempt): Promise<AttemptRecord['deliveryStatus']> {
      const completedAt = now();
      const plan = nextAttemptPlan(target.retryPolicy, job.attemptNumber, outcome, { ...options.jitter, nowMs: completedAt });
      const deliveryStatus = plan.kind === 'retry' ? 'retrying' : plan.kind;
      const attempt = recordOf(job, {
        startedAt,
        completedAt,
        ok: outcome.ok,
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        error: outcome.error ?? null,
        errorKind: outcome.errorKind ?? null,
        responseBody: outcome.responseBody,
        deliveryStatus,
        nextAttemptAt: plan.kind === 'retry' ? plan.dueAt : null,
      });
      metrics.deliveryAttempts.inc({ destination: target.id, outcome: deliveryStatus });
      metrics.deliveryAttemptDuration.observe({ destination: target.id }, outcome.latencyMs / 1000);
      if (deliveryStatus === 'delivered') options.journal?.write(attempt);
      await publish(ATTEMPTS_TOPIC, [withTraceparent(encodeAttemptRecord(attempt), span)]);
      if (plan.kind === 'retry') {
        const tier = tierFor(plan.delayMs);
        await publish(retryTierTopic(tier), [withTraceparent(encodeDeliveryJob({ ...job, attemptNumber: job.attemptNumber + 1, dueAt: plan.dueAt }, body), span)]);
        metrics.retriesScheduled.inc({ tier: tier.name });
      } else if (plan.kind === 'failed') {
        const reason = isGone(outcome) ? 'destination_gone' : 'retries_exhausted';
        await deadLetter(reason, deadLetterOfJob(job, body, reason));
      }
      return deliveryStatus;
    },

    /**
     * A delivered attempt an earlier process journaled but was killed before it published: published now
     * in its stead, the same record (the recorder keeps one per attempt id), and nothing is sent again.
     */
    async journaled(attempt: AttemptRecord): Promise<void> {
      metrics.journaledAttempts.inc();
      await publish(ATTEMPTS_TOPIC, [encodeAttemptRecord(attempt)]);
    },

    /** A job that waited behind another of its source (ordered destinations), back in its destination's topic. */
    async requeue(job: DeliveryJob, body: Buffer): Promise<void> {
      await publish(destinationTopic(job.destinationId), [encodeDeliveryJob(job, body)]);
    },

    /**
     * A job for a destination that no longer exists: nothing is sent, and the delivery ends `failed` (the
     * recorder, sole writer of delivery state, learns it from this record) so its event can settle.
     */
    async destinationDeleted(job: DeliveryJob, body: Buffer): Promise<void> {
      await publishFinalFailure(options, job, 'The destination was deleted; nothing was sent', DESTINATION_DELETED);
      await deadLetter('destination_deleted', deadLetterOfJob(job, body, 'destination_deleted'));
    },

    /**
     * A record that cannot be delivered for a reason of its own (unreadable, or no request can be built
     * from it): to relay.dead as it is, and when its job could be read, its delivery ends `failed` with
     * the reason (errorKind `poison_record`) so its event settles.
     */
    async poisoned(record: BrokerRecord, error: unknown, job?: DeliveryJob): Promise<void> {
      if (job) await publishFinalFailure(options, job, `The job could not be delivered: ${poisonReason(error).detail}`, POISON_RECORD);
      await deadLetterPoison(deadLetter, record, error);
    },
  };
}

export type AttemptReporter = ReturnType<typeof createAttemptReporter>;
