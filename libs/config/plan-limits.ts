import type { Config, Plan } from './config.js';

export interface PlanLimits {
  /** Largest ingest body accepted, in bytes. */
  maxPayloadBytes: number;
  /** Ingest requests per second per source. */
  requestsPerSecond: number;
}

/** The limits of every plan. */
export type PlanLimitTable = Readonly<Record<Plan, PlanLimits>>;

const KB = 1024;
const MB = 1024 * KB;

/** SPEC 8. Enterprise is "custom": its entry is the default the operator may change (see `planLimits`). */
export const DEFAULT_PLAN_LIMITS: PlanLimitTable = {
  free: { maxPayloadBytes: 256 * KB, requestsPerSecond: 10 },
  starter: { maxPayloadBytes: 1 * MB, requestsPerSecond: 100 },
  pro: { maxPayloadBytes: 5 * MB, requestsPerSecond: 500 },
  business: { maxPayloadBytes: 10 * MB, requestsPerSecond: 2000 },
  enterprise: { maxPayloadBytes: 10 * MB, requestsPerSecond: 10000 },
};

/** Every plan's limits, enterprise's as configured. */
export function planLimits(config: Pick<Config, 'enterpriseMaxPayloadBytes' | 'enterpriseRequestsPerSecond'>): PlanLimitTable {
  return {
    ...DEFAULT_PLAN_LIMITS,
    enterprise: { maxPayloadBytes: config.enterpriseMaxPayloadBytes, requestsPerSecond: config.enterpriseRequestsPerSecond },
  };
}

/** The largest payload any plan accepts: the broker's message size must exceed it. */
export function largestPayloadBytes(limits: PlanLimitTable): number {
  return Math.max(...Object.values(limits).map((l) => l.maxPayloadBytes));
}
