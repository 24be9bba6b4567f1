import { RETRY_TIERS, type RetryTier } from '../delivery/retry-schedule.js';

/**
 * Every topic the relay uses, how many partitions it is created with, and the consumer groups that
 * read it: the one place they are declared (`ensureTopics` creates only what is missing, so a second
 * declaration would silently lose to whichever process ran first).
 */

/** Raw webhooks from the gateways, keyed by source; read by the router group. */
export const INGEST_TOPIC = 'relay.ingest';
/** One record per delivery attempt, keyed by event; read by the recorder group. */
export const ATTEMPTS_TOPIC = 'relay.attempts';
/** Config changes every process applies; one partition keeps them in order. Each process reads it in a group of its own (configGroupId). */
export const CONFIG_TOPIC = 'relay.config';
/** Records no consumer could handle, kept for an operator; nothing consumes it. */
export const DEAD_LETTER_TOPIC = 'relay.dead';

/**
 * Topic of one destination's delivery jobs: an ordered destination's, and on Kafka those the lanes
 * parked while the destination had to wait (circuit open, rate budget spent, disabled, too far behind).
 */
export const destinationTopic = (destinationId: string) => `relay.dst.${destinationId}`;
export const DESTINATION_TOPIC_PATTERN = /^relay\.dst\./;
/** Partitions of each destination topic, and of each retry tier. */
export const DESTINATION_PARTITIONS = 4;

/**
 * The shared topic of delivery jobs on Kafka, the lanes (docs/decisions/0008-kafka-lanes-and-parking.md): every job of a
 * destination without ordering, keyed by destination. The deliverer hands each destination's jobs over
 * without waiting for their answers (apps/deliverer/lane-jobs.ts), so partitions only spread the load,
 * and the deliverers' subscription does not grow with the destinations.
 */
export const LANES_TOPIC = 'relay.lanes';
export const LANES_PARTITIONS = 64;

/** Before the lanes, the first attempts of new destinations went here; read with the lanes, so none is left behind. */
export const FRESH_TOPIC = 'relay.fresh';

/** The topic of one retry delay tier. */
export function retryTierTopic(tier: RetryTier): string {
  return `relay.retry.${tier.name}`;
}

export const RETRY_TIER_TOPICS: readonly string[] = RETRY_TIERS.map(retryTierTopic);

/** The topics every role expects at start; partitions allow that many consumers of a group to share the work. */
export const CORE_TOPICS = [
  { topic: INGEST_TOPIC, partitions: 8 },
  { topic: ATTEMPTS_TOPIC, partitions: 8 },
  { topic: CONFIG_TOPIC, partitions: 1 },
  { topic: DEAD_LETTER_TOPIC, partitions: 1 },
  ...RETRY_TIER_TOPICS.map((topic) => ({ topic, partitions: DESTINATION_PARTITIONS })),
  { topic: LANES_TOPIC, partitions: LANES_PARTITIONS },
];

/** `relay.ingest` to stored events and delivery jobs. */
export const ROUTER_GROUP = 'relay-router';
/** `relay.attempts` to the ledger. */
export const RECORDER_GROUP = 'relay-recorder';
/** Every destination topic (DESTINATION_TOPIC_PATTERN): ordered destinations, and the jobs the lanes parked. */
export const DELIVERER_GROUP = 'relay-deliverer';
/** `relay.lanes` and `relay.fresh`, in a group whose subscription never changes; named before the lanes, so its offsets on relay.fresh hold. */
export const LANES_GROUP = 'relay-deliverer-fresh';
/** The retry tier topics. */
export const RETRY_GROUP = 'relay-retry';
/**
 * Where pipeline thread `index` of `count` stands in a group's deal on the embedded log (`ConsumerOptions.rank`).
 * A source's `relay.ingest` partition p (of 8) and its destination topic's, p mod 4, are both keyed by the
 * source; dealt alike, the router and the deliverer of a source would share a thread whenever their groups'
 * members joined in the same order (docs/decisions/0017-pipeline-threads.md). The deliverer's members are ranked d
 * threads on from the others': for the ingest partitions p < 4 the two then meet only if d ≡ 0 (mod count),
 * for p ≥ 4 only if d ≡ -4: d = 1, except for five threads (-4 ≡ 1), where d = 2.
 */
export function pipelineDealRank(groupId: string, index: number, count: number): number {
  const turn = groupId === DELIVERER_GROUP ? (count === 5 ? 2 : 1) : 0;
  return (index + turn) % count;
}

/** `relay.config`: a group per process (`instance` stable across its restarts), as every process needs every change. */
export const configGroupId = (role: string, instance: string) => `relay-config-${role}-${instance}`;
