import { z } from 'zod';
import { isGone, type AttemptOutcome } from './attempt-outcome.js';

const retryPolicyFields = {
  maxRetries: z.number().int().min(0).max(20),
  initialDelay: z.number().int().min(100).max(3_600_000),
  maxDelay: z.number().int().max(86_400_000),
  backoffMultiplier: z.number().min(1).max(10),
};

/** SPEC 2.3.2 with the DESIGN bounds; omitted fields take their defaults, unknown fields are refused. */
export const retryPolicySchema = z
  .strictObject({
    maxRetries: retryPolicyFields.maxRetries.default(5),
    initialDelay: retryPolicyFields.initialDelay.default(1000),
    maxDelay: retryPolicyFields.maxDelay.default(60_000),
    backoffMultiplier: retryPolicyFields.backoffMultiplier.default(2),
  })
  .refine((policy) => policy.maxDelay >= policy.initialDelay, {
    path: ['maxDelay'],
    message: 'maxDelay must be at least initialDelay',
  });

export type RetryPolicy = z.output<typeof retryPolicySchema>;

/**
 * A change to a policy (PATCH): the fields given replace the current ones, the others stay. Each field
 * is checked here; the merged policy is checked again by retryPolicySchema (maxDelay ≥ initialDelay).
 */
export const retryPolicyChangeSchema = z.strictObject(retryPolicyFields).partial();

export interface JitterOptions {
  /** Fraction of the delay added or removed at random, 0..1 (`RELAY_RETRY_JITTER`; 0 in tests). */
  jitter: number;
  /** Uniform in [0, 1); Math.random in production. */
  random?: () => number;
}

/**
 * Delay before retry `retryNumber` (1-based): `min(initialDelay * backoffMultiplier^(n-1), maxDelay)`,
 * then moved by up to ±jitter of itself, and never above maxDelay (the policy's promise).
 */
export function retryDelayMs(policy: RetryPolicy, retryNumber: number, { jitter, random = Math.random }: JitterOptions): number {
  const base = Math.min(policy.initialDelay * policy.backoffMultiplier ** (retryNumber - 1), policy.maxDelay);
  const jittered = base * (1 + jitter * (2 * random() - 1));
  return Math.round(Math.min(Math.max(jittered, 0), policy.maxDelay));
}

export type AttemptPlan = { kind: 'delivered' } | { kind: 'retry'; delayMs: number; dueAt: number } | { kind: 'failed' };

/**
 * What follows attempt `attemptNumber` (1-based). Every non-2xx, timeout and network error is
 * retried until `1 + maxRetries` attempts were made, except `410 Gone`, which fails at once. A Retry-After on 429/503 is a lower bound
 * on the wait ("not before"), capped at maxDelay like every other delay.
 */
export function nextAttemptPlan(
  policy: RetryPolicy,
  attemptNumber: number,
  outcome: Pick<AttemptOutcome, 'ok' | 'statusCode' | 'retryAfterMs'>,
  options: JitterOptions & { nowMs: number },
): AttemptPlan {
  if (outcome.ok) return { kind: 'delivered' };
  if (isGone(outcome) || attemptNumber >= 1 + policy.maxRetries) return { kind: 'failed' };
  let delayMs = retryDelayMs(policy, attemptNumber, options);
  const honoursRetryAfter = outcome.statusCode === 429 || outcome.statusCode === 503;
  if (honoursRetryAfter && outcome.retryAfterMs !== undefined) {
    delayMs = Math.min(Math.max(delayMs, outcome.retryAfterMs), policy.maxDelay);
  }
  return { kind: 'retry', delayMs, dueAt: options.nowMs + delayMs };
}

export interface RetryTier {
  name: string;
  delayMs: number;
}

/** The delay tiers, shortest first; each has its own topic (`retryTierTopic` in libs/pipeline/topology.ts). */
export const RETRY_TIERS: readonly RetryTier[] = [
  { name: '1s', delayMs: 1_000 },
  { name: '5s', delayMs: 5_000 },
  { name: '30s', delayMs: 30_000 },
  { name: '2m', delayMs: 120_000 },
  { name: '10m', delayMs: 600_000 },
  { name: '1h', delayMs: 3_600_000 },
];

/**
 * The longest tier that does not overshoot the time left, so a job never waits past its due time
 * in a tier; below the shortest tier, the shortest one (its consumer waits only until due).
 */
export function tierFor(msUntilDue: number): RetryTier {
  let chosen = RETRY_TIERS[0]!;
  for (const tier of RETRY_TIERS) if (tier.delayMs <= msUntilDue) chosen = tier;
  return chosen;
}


