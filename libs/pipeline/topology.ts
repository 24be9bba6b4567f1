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

/** Topic of one destination's delivery jobs: a slow destination never delays another. */
export const destinationTopic = (destinationId: string) => `relay.dst.${destinationId}`;
export const DESTINATION_TOPIC_PATTERN = /^relay\.dst\./;
/** Partitions of each destination topic, and of each retry tier. */
export const DESTINATION_PARTITIONS = 4;

/**
 * Shared topic of the first attempts of destinations created lately, which the deliverers' pattern
 * subscription may not cover yet: a subscription grows only through a group rebalance, while this topic
 * is consumed from the deliverer's start (docs/DECISIONS.md, "New destinations on Kafka").
 */
export const FRESH_DESTINATIONS_TOPIC = 'relay.fresh';

/**
 * Its records are keyed by destination; the deliverer hands each destination's jobs over without
 * waiting for their answers (apps/deliverer/fresh-destinations.ts), so partitions only spread the load.
 */
export const FRESH_DESTINATIONS_PARTITIONS = 16;

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
  { topic: FRESH_DESTINATIONS_TOPIC, partitions: FRESH_DESTINATIONS_PARTITIONS },
];

/** `relay.ingest` to stored events and delivery jobs. */
export const ROUTER_GROUP = 'relay-router';
/** `relay.attempts` to the ledger. */
export const RECORDER_GROUP = 'relay-recorder';
/** Every destination topic (DESTINATION_TOPIC_PATTERN). */
export const DELIVERER_GROUP = 'relay-deliverer';
/** `relay.fresh`, in a group whose subscription never changes. */
export const FRESH_GROUP = 'relay-deliverer-fresh';
/** The retry tier topics. */
export const RETRY_GROUP = 'relay-retry';
/** `relay.config`: a group per process (`instance` stable across its restarts), as every process needs every change. */
export const configGroupId = (role: string, instance: string) => `relay-config-${role}-${instance}`;
