import type { PlanLimitTable } from '../config/plan-limits.js';
import type { RelayMetrics } from '../metrics/relay-metrics.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { TransformationRunner } from './route-transformations.js';
import type { Sandbox } from './threaded-sandbox.js';

/** The runner the router and replays use: env opened from its seal, limits by plan, every call measured. */
export function transformationRunner(deps: { sandbox: Sandbox; secrets: SecretBox; limits: PlanLimitTable; metrics?: Pick<RelayMetrics, 'transformationDuration' | 'transformationFailures'> }): TransformationRunner {
  return {
    sandbox: deps.sandbox,
    openEnv: (sealed) => JSON.parse(deps.secrets.open(sealed)) as Record<string, string>,
    maxResultBytes: (plan) => deps.limits[plan].maxPayloadBytes,
    observe(transformationId, outcome) {
      deps.metrics?.transformationDuration.observe({ transformation: transformationId }, outcome.durationMs / 1000);
      if (outcome.error) deps.metrics?.transformationFailures.inc({ transformation: transformationId });
    },
  };
}
