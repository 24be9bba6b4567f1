import type { BrokerRecord, OutgoingMessage, Producer } from '../../libs/broker/broker.js';
import type { AttemptOutcome } from '../../libs/delivery/attempt-outcome.js';
import { nextAttemptPlan, retryTierTopic, tierFor, type JitterOptions } from '../../libs/delivery/retry-schedule.js';
import { newId } from '../../libs/ids/ids.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { ATTEMPTS_TOPIC, encodeAttemptRecord, type AttemptRecord } from '../../libs/pipeline/attempt-record.js';
import { DEAD_LETTER_TOPIC, encodeDeliveryJob, type DeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { deadLetterOfJob, deadLetterOfRecord, type DeadLetterReason } from './dead-letter.js';
import type { DeliveryTarget } from './delivery-lookup.js';

export interface AttemptReporterOptions {
  producer: Producer;
  metrics: RelayMetrics;
  jitter: JitterOptions;
  now: () => number;
}

export interface SentAttempt {
  job: DeliveryJob;
  body: Buffer;
  target: DeliveryTarget;
  outcome: AttemptOutcome;
  startedAt: number;
}

/** `errorKind` of the attempt recorded for a job whose destination was deleted. */
export const DESTINATION_DELETED = 'destination_deleted';

/**
 * Publishes what became of an attempt. The AttemptRecord goes first and the retry job or dead letter
 * only after it is durable, so the recorder never sees attempt n+1 before attempt n.
 */
export function createAttemptReporter(options: AttemptReporterOptions) {
  const { producer, metrics, now } = options;

  async function publish(topic: string, message: OutgoingMessage): Promise<void> {
    const stopTimer = metrics.brokerPublishDuration.startTimer({ topic });
    await producer.send(topic, [message]);
    stopTimer();
  }

  async function deadLetter(message: OutgoingMessage, reason: DeadLetterReason): Promise<void> {
    await publish(DEAD_LETTER_TOPIC, message);
    metrics.deadLetters.inc({ reason });
  }

  function recordOf(job: DeliveryJob, fields: Omit<AttemptRecord, 'attemptId' | 'deliveryId' | 'eventId' | 'orgId' | 'destinationId' | 'attemptNumber'>): AttemptRecord {
    const { deliveryId, eventId, orgId, destinationId, attemptNumber } = job;
    return { attemptId: newId('att'), deliveryId, eventId, orgId, destinationId, attemptNumber, ...fields };
  }

  return {
    /** An attempt that reached the sender: recorded, then retried through a tier or dead-lettered. */
    async sent({ job, body, target, outcome, startedAt }: SentAttempt): Promise<void> {
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
      await publish(ATTEMPTS_TOPIC, encodeAttemptRecord(attempt));
      if (plan.kind === 'retry') {
        const tier = tierFor(plan.delayMs);
        await publish(retryTierTopic(tier), encodeDeliveryJob({ ...job, attemptNumber: job.attemptNumber + 1, dueAt: plan.dueAt }, body));
        metrics.retriesScheduled.inc({ tier: tier.name });
      } else if (plan.kind === 'failed') {
        await deadLetter(deadLetterOfJob(job, body, 'retries_exhausted'), 'retries_exhausted');
      }
    },

    /**
     * A job for a destination that no longer exists: nothing is sent, and the delivery ends `failed` (the
     * recorder, sole writer of delivery state, learns it from this record) so its event can settle.
     */
    async destinationDeleted(job: DeliveryJob, body: Buffer): Promise<void> {
      const at = now();
      const attempt = recordOf(job, {
        startedAt: at,
        completedAt: at,
        ok: false,
        statusCode: null,
        latencyMs: 0,
        error: 'The destination was deleted; nothing was sent',
        errorKind: DESTINATION_DELETED,
        responseBody: '',
        deliveryStatus: 'failed',
        nextAttemptAt: null,
      });
      metrics.deliveryAttempts.inc({ destination: job.destinationId, outcome: 'failed' });
      await publish(ATTEMPTS_TOPIC, encodeAttemptRecord(attempt));
      await deadLetter(deadLetterOfJob(job, body, 'destination_deleted'), 'destination_deleted');
    },

    /** A record without a readable job: no delivery can be named, so it only goes to relay.dead. */
    async malformed(record: BrokerRecord): Promise<void> {
      await deadLetter(deadLetterOfRecord(record), 'malformed_record');
    },
  };
}

export type AttemptReporter = ReturnType<typeof createAttemptReporter>;
