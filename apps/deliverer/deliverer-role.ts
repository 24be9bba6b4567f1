import { pipelineThreadCount } from '../../libs/config/config.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { createStoreDeliveryLookup } from '../../libs/delivery/store-lookup.js';
import type { Role, RoleBuilder } from '../../libs/roles/role.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { DELIVERER_GROUP, DESTINATION_PARTITIONS, destinationTopic, LANES_GROUP, RETRY_GROUP } from '../../libs/pipeline/topology.js';
import { createDeliverer } from './deliverer.js';
import { createGoneDestinations } from './gone-destinations.js';
import { createSqlSourceLines } from './source-lines.js';

/** Sends jobs to destinations, with breakers, rate limits and retry tiers; reports every attempt. */
export const buildDelivererRole: RoleBuilder = ({ config, broker, store, secrets, metrics, logger, announce, tracer }): Role => {
  const deliverer = createDeliverer({
    broker,
    lookup: createStoreDeliveryLookup(store, secrets),
    secrets,
    sender: createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations }),
    metrics,
    gone: createGoneDestinations(store.sql, announce),
    lines: createSqlSourceLines(store.sql),
    logger,
    tracer,
    jitter: config.retryJitter,
    maxInFlightPerSource: config.maxInFlightPerSource,
    // Several deliverers share a destination's partitions on Kafka or on pipeline threads: its rate is counted in the store.
    ...(config.kafkaBrokers || pipelineThreadCount(config) > 1 ? { sharedRateWindows: createRateWindows(store.sql) } : {}),
    // Not awaited: a breaker's change must not wait on the broker (or fail a delivery).
    onCircuitChange: (destinationId, state) =>
      void announce({ kind: 'circuit', destinationId, state }).catch((error: unknown) =>
        logger.warn({ err: error, destinationId, state }, 'circuit state announcement failed'),
      ),
  });
  // Refreshing a Kafka subscription means a rebalance (seconds): it runs behind, one at a time, and
  // never holds up the API answer or the config consumer. Jobs wait in their topic meanwhile.
  let refreshes = Promise.resolve();
  return {
    name: 'deliverer',
    async start() {
      // Ordered destinations created while no deliverer ran may have no topic yet; a pattern subscription
      // needs one. The others' jobs go through the lanes (Kafka) or make their topic (embedded log).
      const destinationIds = await store.sql.all<{ id: string }>("SELECT id FROM destinations WHERE ordering = 'source'");
      await broker.admin().ensureTopics(destinationIds.map(({ id }) => ({ topic: destinationTopic(id), partitions: DESTINATION_PARTITIONS })));
      await deliverer.start();
    },
    async stop() {
      await deliverer.stop();
      await refreshes;
    },
    consumerGroups: [DELIVERER_GROUP, LANES_GROUP, RETRY_GROUP],
    onConfigChange(change) {
      // A breaker state is taken on at once, not behind the subscription refreshes.
      if (change.kind === 'circuit') {
        deliverer.refresh(change).catch((error: unknown) => logger.warn({ err: error, change }, 'circuit state not taken on'));
        return;
      }
      if (change.kind === 'key') return;
      refreshes = refreshes.then(() => deliverer.refresh(change)).catch((error: unknown) => logger.warn({ err: error, change }, 'deliverer refresh failed'));
    },
  };
};
