import type { RoleBuilder } from '../../libs/roles/role.js';
import { createRouteTargets } from '../../libs/routing/route-targets.js';
import { createTransformSandbox } from '../../libs/transformations/transform-sandbox.js';
import { transformationRunner } from '../../libs/transformations/transformation-runner.js';
import { ROUTER_GROUP } from '../../libs/pipeline/topology.js';
import { createRouterConsumer } from './router-consumer.js';
import { createSearchIndexer } from './search-indexer.js';

/** Stores ingested events and fans them out to their destinations' jobs. */
export const buildRouterRole: RoleBuilder = async ({ config, broker, store, publish, secrets, deadLetters, metrics, limits, tracer }) => {
  const routeTargets = createRouteTargets(store.sql);
  const sandbox = await createTransformSandbox({ timeoutMs: config.transformTimeoutMs, memoryMb: config.transformMemoryMb });
  const consumer = createRouterConsumer(broker, {
    transformations: transformationRunner({ sandbox, secrets, limits, metrics }),
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
      sandbox.dispose();
    },
    consumerGroups: [ROUTER_GROUP],
    onConfigChange: (change) => {
      if (change.kind !== 'circuit' && change.kind !== 'key') routeTargets.invalidate();
    },
  };
};

/**
 * Indexes what the router stored for search, behind its inserts, never inside them (docs/decisions/0046-search-behind-the-insert.md);
 * part of the router role. A process of role `all` with pipeline threads runs it on a thread of its own
 * instead (apps/relay/search-indexer-thread.ts).
 */
export const buildSearchIndexerRole: RoleBuilder = ({ store, metrics, logger }) => {
  const searchIndexer = createSearchIndexer({ sql: store.sql, lag: metrics.searchIndexLag, logger });
  return {
    name: 'search indexer',
    start: async () => searchIndexer.start(),
    stop: () => searchIndexer.stop(),
  };
};
