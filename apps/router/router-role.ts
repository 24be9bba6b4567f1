import type { RoleBuilder } from '../../libs/roles/role.js';
import { createRouteTargets } from '../../libs/routing/route-targets.js';
import { ROUTER_GROUP } from '../../libs/pipeline/topology.js';
import { createRouterConsumer } from './router-consumer.js';
import { createSearchIndexer } from './search-indexer.js';

/** Stores ingested events and fans them out to their destinations' jobs; indexes what it stored for search. */
export const buildRouterRole: RoleBuilder = ({ config, broker, store, publish, secrets, deadLetters, metrics, logger }) => {
  const routeTargets = createRouteTargets(store.sql);
  const consumer = createRouterConsumer(broker, {
    sql: store.sql,
    routesFor: routeTargets.forSource,
    publish,
    now: Date.now,
    secrets,
    deadLetters,
    lanes: Boolean(config.kafkaBrokers),
  });
  // Behind the router's inserts, never inside them (docs/DECISIONS.md).
  const searchIndexer = createSearchIndexer({ sql: store.sql, lag: metrics.searchIndexLag, logger });
  return {
    name: 'router',
    async start() {
      await consumer.start();
      searchIndexer.start();
    },
    async stop() {
      await consumer.stop();
      await searchIndexer.stop();
    },
    consumerGroups: [ROUTER_GROUP],
    onConfigChange: (change) => {
      if (change.kind !== 'circuit' && change.kind !== 'key') routeTargets.invalidate();
    },
  };
};
