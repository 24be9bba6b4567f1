import type { BatchOutcome, OutgoingMessage, Producer, RecordBatch } from '../../libs/broker/broker.js';
import { recordTraceparent, withTraceparent } from '../../libs/tracing/record-trace.js';
import type { RelayTracer } from '../../libs/tracing/relay-tracer.js';
import { RETRY_TIERS, tierFor, type RetryTier } from '../../libs/delivery/retry-schedule.js';
import { decodeDeliveryJob, deliveryJobMessage, encodeDeliveryJob } from '../../libs/pipeline/delivery-job.js';
import { isDependencyFailure } from '../../libs/pipeline/poison-records.js';
import type { AttemptReporter } from './attempt-reporter.js';
import type { PauseHolds } from './pause-holds.js';
import { retryTierTopic } from '../../libs/pipeline/topology.js';

const NOT_DUE = 'not_due';

const TIERS_BY_TOPIC = new Map<string, RetryTier>(RETRY_TIERS.map((tier) => [retryTierTopic(tier), tier]));

export interface RetryTierDeps {
  producer: Producer;
  reporter: Pick<AttemptReporter, 'poisoned'>;
  holds: PauseHolds;
  now: () => number;
  stopping(): boolean;
  tracer: RelayTracer;
}

const SHORTEST_TIER = RETRY_TIERS[0]!;

/**
 * When a record in `tier` must move on: once it has waited the tier's delay since it was appended, or
 * as soon as less time is left than the tier's delay (a shorter tier fits it), or, in the shortest
 * tier, which takes every wait below its delay, at its due time.
 *
 * A record enters a tier with at least the tier's delay left (`tierFor`), so outside the shortest tier
 * it moves by `appendedAt + delay`, which grows with the offset: a record held up behind the head of
 * its partition still moves on before it is due. In the shortest tier a head due later than a record
 * behind it holds that record up, by less than the shortest tier's delay.
 */
export function moveAt(tier: RetryTier, appendedAt: number, dueAt: number): number {
  const outgrownAt = tier === SHORTEST_TIER ? dueAt : dueAt - tier.delayMs + 1;
  return Math.min(appendedAt + tier.delayMs, outgrownAt);
}

/**
 * The retry tier consumer's batch handler. A record that must move goes back to its destination topic
 * when due, else to the tier that fits the time it has left (a shorter one, or this one again for a
 * long wait). At the first record that must stay, its partition is paused until that record's time and
 * only the prefix before it is committed: no sleeping, and other tiers and partitions go on.
 */
export function createRetryTierHandler(deps: RetryTierDeps) {
  return async function handleRetryBatch(batch: RecordBatch): Promise<BatchOutcome> {
    const tier = TIERS_BY_TOPIC.get(batch.topic);
    if (!tier) throw new RangeError(`${batch.topic} is not a retry tier topic`);
    const moves = new Map<string, OutgoingMessage[]>();
    const poisoned: Promise<void>[] = [];
    let handled = batch.records.length;
    for (const [index, record] of batch.records.entries()) {
      if (deps.stopping()) {
        handled = index;
        break;
      }
      let decoded;
      try {
        decoded = decodeDeliveryJob(record);
      } catch (error) {
        if (isDependencyFailure(error)) throw error;
        poisoned.push(deps.reporter.poisoned(record, error));
        continue;
      }
      const { job, body } = decoded;
      const now = deps.now();
      const at = moveAt(tier, record.timestamp, job.dueAt);
      if (now < at) {
        deps.holds.hold({ topic: batch.topic, partition: batch.partition }, NOT_DUE, at - now);
        handled = index;
        break;
      }
      const { topic: next, message } = job.dueAt <= now ? deliveryJobMessage(job, body) : { topic: retryTierTopic(tierFor(job.dueAt - now)), message: encodeDeliveryJob(job, body) };
      // The wait in this tier, seen whole once it is over: the next attempt is its child.
      const waited = deps.tracer.start('retry wait', recordTraceparent(record), { startTime: record.timestamp, attributes: { 'relay.retry_tier': tier.name, 'relay.attempt': job.attemptNumber } });
      waited.end(now);
      const list = moves.get(next);
      if (list) list.push(withTraceparent(message, waited));
      else moves.set(next, [withTraceparent(message, waited)]);
    }
    const published = await Promise.allSettled([...poisoned, ...[...moves].map(([topic, messages]) => deps.producer.send(topic, messages))]);
    // All of it again (at least once): what did get published is moved twice, which only costs a duplicate.
    const failed = published.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
    return { handled };
  };
}
