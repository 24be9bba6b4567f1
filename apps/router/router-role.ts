import type { RoleBuilder } from '../../libs/roles/role.js';
import { createRouteTargets } from '../../libs/routing/route-targets.js';
import { createThreadedSandbox } from '../../libs/transformations/threaded-sandbox.js';
import { transformationRunner } from '../../libs/transformations/transformation-runner.js';
import { ROUTER_GROUP } from '../../libs/pipeline/topology.js';
import { createRouterConsumer } from './router-consumer.js';

/** Stores ingested events and fans them out to their destinations' jobs. */
export const buildRouterRole: RoleBuilder = async ({ config, broker, store, publish, secrets, deadLetters, metrics, limits, tracer }) => {
  const routeTargets = createRouteTargets(store.sql);
  const sandbox = await createThreadedSandbox({ timeoutMs: config.transformTimeoutMs, memoryMb: config.transformMemoryMb });
  const consumer = createRouterConsumer(broker, {
    transformations: transformationRunner({ sandbox, secrets, limits, metrics }),
    transformationBudgetMs: config.transformTimeoutMs,
    sql: store.sql,
    routesFor: routeTargets.forSource,
    publish,
    now: Date.now,
    secrets,
    deadLetters,
    lanes: Boolean(config.kafkaBrokers),
    tracer,
  });
  return {
    name: 'router',
    start: () => consumer.start(),
    stop: async () => {
      await consumer.stop();
      await sandbox.dispose();
    },
    consumerGroups: [ROUTER_GROUP],
    onConfigChange: (change) => {
      if (change.kind !== 'circuit' && change.kind !== 'key') routeTargets.invalidate();
    },
  };
};
