import { pipelineThreadCount } from '../../libs/config/config.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { httpTargetSender } from '../../libs/delivery/target-port.js';
import { createTargetCheck } from '../../libs/delivery/allowed-target.js';
import { createTargetSenders } from '../../libs/delivery/targets/target-senders.js';
import { createStoreDeliveryLookup } from '../../libs/delivery/store-lookup.js';
import type { Role, RoleBuilder } from '../../libs/roles/role.js';
import { orderedDestinationIds } from '../../libs/destinations/destination-queries.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { DELIVERER_GROUP, DESTINATION_PARTITIONS, destinationTopic, LANES_GROUP, RETRY_GROUP } from '../../libs/pipeline/topology.js';
import { createDeliverer } from './deliverer.js';
import { createGoneDestinations } from './gone-destinations.js';
import { createSqlSourceLines } from '../../libs/ordering/source-lines.js';
import { deliveredAmong } from '../../libs/ledger/deliveries.js';
import { unrefSchedule } from '../../libs/time/schedule.js';
import { recorderCaughtUp } from './recorder-caught-up.js';
import { claimDeliveredJournal } from './delivered-journal.js';
import { createConfigRefreshes } from './config-refreshes.js';

/** Sends jobs to destinations, with breakers, rate limits and retry tiers; reports every attempt. */
export const buildDelivererRole: RoleBuilder = ({ config, broker, store, secrets, metrics, logger, announce, deadLetters, tracer, thread }): Role => {
  let recorded = Promise.resolve();
  // The next process on this data directory reads the journals: on the embedded log the one that reads the
  // jobs again (its owner lock); on Kafka, whichever takes the partitions back, when it is this machine's.
  const journalName = thread ?? 'main';
  const journal = claimDeliveredJournal(config.dataDir, journalName, {
    onWriteFailed: (error) => logger.warn({ err: error }, 'delivered attempts are not journaled until a write succeeds; a kill before their publish means a second request'),
  });
  if (!journal) logger.info({ dataDir: config.dataDir, journal: journalName }, 'another process holds this deliverer journal; delivered attempts are not journaled here, so a kill before their publish means a second request');
  const deliverer = createDeliverer({
    broker,
    destinations: {
      lookup: createStoreDeliveryLookup(store, secrets),
      gone: createGoneDestinations(store.sql, announce),
      lines: createSqlSourceLines(store.sql, deadLetters),
      secrets,
      // Asked only about jobs an earlier process may have sent: once the recorder has stored what it reported.
      async delivered(deliveryIds) {
        // Most batches after a start carry no such job: they must not wait for the recorder.
        if (deliveryIds.length === 0) return new Set();
        await recorded;
        return deliveredAmong(store.sql, deliveryIds);
      },
    },
    sending: {
      sender: createTargetSenders({
        http: httpTargetSender(createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations })),
        // Queue targets are judged again before each connection: a name may resolve elsewhere since it was saved.
        checkTarget: createTargetCheck({ blockPrivateDestinations: config.blockPrivateDestinations }),
      }),
      maxInFlightPerSource: config.maxInFlightPerSource,
    },
    checks: {
      // Several deliverers share a destination's partitions on Kafka or on pipeline threads: its rate is counted in the store.
      ...(config.kafkaBrokers || pipelineThreadCount(config) > 1 ? { sharedRateWindows: createRateWindows(store.sql) } : {}),
      // Not awaited: a breaker's change must not wait on the broker (or fail a delivery).
      onCircuitChange: (destinationId, state) =>
        void announce({ kind: 'circuit', destinationId, state }).catch((error: unknown) =>
          logger.warn({ err: error, destinationId, state }, 'circuit state announcement failed'),
        ),
    },
    retries: { jitter: config.retryJitter },
    journal,
    observe: { metrics, logger, tracer },
  });
  const refreshes = createConfigRefreshes({ apply: (change) => deliverer.refresh(change), logger });
  return {
    name: 'deliverer',
    async start() {
      // Ordered destinations created while no deliverer ran may have no topic yet; a pattern subscription
      // needs one. The others' jobs go through the lanes (Kafka) or make their topic (embedded log).
      const destinationIds = await orderedDestinationIds(store.sql);
      await broker.admin().ensureTopics(destinationIds.map((id) => ({ topic: destinationTopic(id), partitions: DESTINATION_PARTITIONS })));
      // Not knowing costs only sending again what may have been sent: at least once holds either way.
      recorded = recorderCaughtUp(broker.admin(), { now: Date.now, schedule: unrefSchedule }).catch((error: unknown) =>
        logger.warn({ err: error }, 'the recorder offsets could not be read; jobs read again are sent without asking the store'),
      );
      await deliverer.start();
    },
    async stop() {
      // The deliverer stops taking jobs at once, as a refresh under way (a rebalance) finishes.
      await Promise.all([deliverer.stop(), refreshes.stop()]);
    },
    consumerGroups: [DELIVERER_GROUP, LANES_GROUP, RETRY_GROUP],
    onConfigChange(change) {
      // A breaker state is taken on at once, not behind the subscription refreshes.
      if (change.kind === 'circuit') {
        deliverer.refresh(change).catch((error: unknown) => logger.warn({ err: error, change }, 'circuit state not taken on'));
        return;
      }
      if (change.kind === 'key') return;
      refreshes.push(change);
    },
  };
};
