import type { Plan } from './config.js';

export interface PlanLimits {
  /** Largest ingest body accepted, in bytes. */
  maxPayloadBytes: number;
  /** Ingest requests per second per source. */
  requestsPerSecond: number;
}

const KB = 1024;
const MB = 1024 * KB;

/** SPEC 8. Enterprise is "custom": these are its defaults until an organization carries its own. */
export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: { maxPayloadBytes: 256 * KB, requestsPerSecond: 10 },
  starter: { maxPayloadBytes: 1 * MB, requestsPerSecond: 100 },
  pro: { maxPayloadBytes: 5 * MB, requestsPerSecond: 500 },
  business: { maxPayloadBytes: 10 * MB, requestsPerSecond: 2000 },
  enterprise: { maxPayloadBytes: 10 * MB, requestsPerSecond: 10000 },
};

/** The largest payload any plan accepts: the broker's message size must exceed it. */
export const MAX_PAYLOAD_BYTES = Math.max(...Object.values(PLAN_LIMITS).map((l) => l.maxPayloadBytes));
