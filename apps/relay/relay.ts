import type Router from '@koa/router';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Broker, OutgoingMessage } from '../../libs/broker/broker.js';
import { createBroker } from '../../libs/broker/create-broker.js';
import type { Config } from '../../libs/config/config.js';
import { UnavailableError } from '../../libs/errors/errors.js';
import { createHttpApp } from '../../libs/http/http-app.js';
import { startHttpServer } from '../../libs/http/http-server.js';
import { probeRouter } from '../../libs/http/probe-router.js';
import { createLogger, type Logger } from '../../libs/logging/logger.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { metricsRouter } from '../../libs/metrics/metrics-router.js';
import { CONFIG_TOPIC, INGEST_TOPIC } from '../../libs/pipeline/ingest-message.js';
import { decodeConfigChange, encodeConfigChange, type ConfigChange } from '../../libs/pipeline/config-change.js';
import { decodeRecords } from '../../libs/pipeline/decode-records.js';
import { loadOrCreateKeyFile } from '../../libs/secrets/key-file.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { createDedupLedger, type DedupLedger } from '../../libs/store/dedup-ledger.js';
import { openDedupJournal } from '../../libs/store/dedup-journal.js';
import { largestPayloadBytes, planLimits } from '../../libs/config/plan-limits.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../libs/broker/embedded/embedded-broker.js';
import { createMemoryRateWindows } from '../../libs/store/memory-rate-windows.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { ATTEMPTS_TOPIC } from '../../libs/pipeline/attempt-record.js';
import { DEAD_LETTER_TOPIC, destinationTopic } from '../../libs/pipeline/delivery-job.js';
import { RETRY_TIER_TOPICS } from '../../libs/delivery/retry-schedule.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { apiRouter } from '../api/api-app.js';
import { createJanitor } from '../janitor/janitor.js';
import { DAY_MS } from '../janitor/retention-sweep.js';
import { createDeliverer, DELIVERER_GROUP, type Deliverer } from '../deliverer/deliverer.js';
import { RETRY_GROUP } from '../deliverer/retry-tiers.js';
import { startLagReporter } from './lag-reporter.js';
import { createStoreDeliveryLookup } from '../deliverer/store-lookup.js';
import { createRecorderConsumer, RECORDER_GROUP } from '../recorder/recorder-consumer.js';
import { createRouterConsumer, ROUTER_GROUP } from '../router/router-consumer.js';
import { createRouteTargets } from '../router/route-targets.js';
import { ingestRouter } from '../gateway/ingest-router.js';
import { createSourceResolver } from '../gateway/source-resolver.js';
import { bootstrapOrganization, type BootstrapResult } from './bootstrap.js';

export interface RunningRelay {
  url: string;
  port: number;
  store: Store;
  broker: Broker;
  bootstrap: BootstrapResult;
  /** The gateway's dedup ledger, when this process runs the gateway. */
  dedup?: DedupLedger;
  close(): Promise<void>;
}

export interface RelayOptions {
  logger?: Logger;
}

const serves = (config: Config, role: Config['role']) => config.role === 'all' || config.role === role;

/** Topics every role expects; partitions allow that many consumers of a group to share the work. */
const CORE_TOPICS = [
  { topic: INGEST_TOPIC, partitions: 8 },
  { topic: ATTEMPTS_TOPIC, partitions: 8 },
  { topic: CONFIG_TOPIC, partitions: 1 },
  { topic: DEAD_LETTER_TOPIC, partitions: 1 },
  ...RETRY_TIER_TOPICS.map((topic) => ({ topic, partitions: 4 })),
];

/**
 * Every process needs every config change, so each has a group of its own. The id is stable across
 * restarts of the same instance (a fresh group per start would leave abandoned groups pinning old
 * records); only an ephemeral port (tests) gets a random one.
 */
function configGroupId(config: Config): string {
  const instance = config.port === 0 ? randomBytes(6).toString('hex') : `${hostname()}-${config.port}`;
  return `relay-config-${config.role}-${instance}`;
}

/** The composition root: wires config, store, broker and metrics into the roles this process runs. */
export async function startRelay(config: Config, options: RelayOptions = {}): Promise<RunningRelay> {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const metrics = createRelayMetrics();
  const closers: (() => Promise<void>)[] = [];
  let closing: Promise<void> | undefined;
  const closeAll = () =>
    (closing ??= (async () => {
      for (const close of [...closers].reverse()) await close().catch((error) => logger.error({ err: error }, 'error while closing'));
    })());
  try {
    const store = await openStore({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      onBackgroundError: (error) => logger.warn({ err: error }, 'Background database work failed (an idle connection, or a checkpoint); it is retried'),
    });
    closers.push(() => store.close());
    if (config.databaseUrl && !config.encryptionKey) {
      logger.warn('RELAY_ENCRYPTION_KEY is not set: secrets are sealed with a key file in RELAY_DATA_DIR, which other machines sharing this database cannot read');
    }
    const secrets = createSecretBox(config.encryptionKey ?? (await loadOrCreateKeyFile(config.dataDir)));
    const limits = planLimits(config);
    const broker = await createBroker({
      kafkaBrokers: config.kafkaBrokers,
      clientId: config.kafkaClientId,
      dataDir: config.dataDir,
      fsync: config.fsync,
      logger,
      kafka: {
        maxWaitTimeInMs: config.kafkaMaxWaitMs,
        sessionTimeoutMs: config.kafkaSessionTimeoutMs,
        heartbeatIntervalMs: Math.floor(config.kafkaSessionTimeoutMs / 10),
      },
      // A raised enterprise payload limit must still fit in one record.
      embedded: { maxMessageBytes: Math.max(DEFAULT_MAX_MESSAGE_BYTES, largestPayloadBytes(limits)) },
    });
    closers.push(() => broker.close());
    await broker.admin().ensureTopics(CORE_TOPICS);
    const producer = broker.producer();
    // Every publish of the composition root's roles goes through here, so its latency is measured.
    const publish = async (topic: string, messages: OutgoingMessage[]) => {
      const stopTimer = metrics.brokerPublishDuration.startTimer({ topic });
      await producer.send(topic, messages);
      stopTimer();
    };
    const bootstrap = await bootstrapOrganization(store, config, logger);

    const resolver = createSourceResolver({
      lookup: { organizationBySlug: (slug) => store.organizations.bySlug(slug), sourceBySlug: (orgId, slug) => store.sources.findOneBy(orgId, { slug }) },
      secrets,
      limits,
    });
    const routeTargets = createRouteTargets(store.sql);
    let deliverer: Deliverer | undefined;
    // Refreshing a Kafka subscription means a rebalance (seconds): it runs behind, one at a time, and
    // never holds up the API answer or the config consumer. Jobs wait in their topic meanwhile.
    let delivererRefresh = Promise.resolve();
    const applyChange = (change: ConfigChange) => {
      if (change.kind !== 'destination') resolver.invalidate();
      routeTargets.invalidate();
      if (!deliverer) return;
      const running = deliverer;
      delivererRefresh = delivererRefresh
        .then(() => running.refresh(change))
        .catch((error: unknown) => logger.warn({ err: error, change }, 'deliverer refresh failed'));
    };
    // Every process hears every change: a group of its own, starting at the newest record.
    const configConsumer = broker.consumer({
      groupId: configGroupId(config),
      topics: [CONFIG_TOPIC],
      handleBatch: async (batch) => {
        for (const change of await decodeRecords(batch.records, decodeConfigChange, publish)) applyChange(change);
      },
    });
    await configConsumer.start();
    closers.push(() => configConsumer.stop());
    const announce = async (change: ConfigChange) => {
      applyChange(change);
      await publish(CONFIG_TOPIC, [encodeConfigChange(change)]);
    };
    // Started recorder first and router last, so closing (in reverse) stops taking new work first and
    // lets the recorder store the outcomes of the deliverer's last requests.
    const groups: string[] = [];
    if (serves(config, 'recorder')) {
      const recorder = createRecorderConsumer(broker, store.sql);
      await recorder.start();
      closers.push(() => recorder.stop());
      groups.push(RECORDER_GROUP);
    }
    if (serves(config, 'deliverer')) {
      const running = createDeliverer({
        broker,
        lookup: createStoreDeliveryLookup(store, secrets),
        sender: createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations }),
        metrics,
        logger,
        jitter: config.retryJitter,
        maxInFlightPerSource: config.maxInFlightPerSource,
      });
      // Destinations created while no deliverer ran may have no topic yet; a pattern subscription needs one.
      const destinationIds = await store.sql.all<{ id: string }>('SELECT id FROM destinations');
      await broker.admin().ensureTopics(destinationIds.map(({ id }) => ({ topic: destinationTopic(id), partitions: 4 })));
      await running.start();
      closers.push(() => running.stop());
      deliverer = running;
      groups.push(DELIVERER_GROUP, RETRY_GROUP);
    }
    if (serves(config, 'router')) {
      const router = createRouterConsumer(broker, {
        sql: store.sql,
        routesFor: routeTargets.forSource,
        publish,
        now: Date.now,
        secrets,
      });
      await router.start();
      closers.push(() => router.stop());
      groups.push(ROUTER_GROUP);
    }
    if (groups.length > 0) {
      const lag = startLagReporter({ admin: broker.admin(), groups, gauge: metrics.consumerLag, logger });
      closers.push(async () => lag.stop());
    }

    const ready = async () => {
      try {
        await store.ping();
      } catch (error) {
        throw new UnavailableError('The store is not reachable', error);
      }
    };
    const routers: Router[] = [probeRouter(ready), metricsRouter(metrics.registry, config.metricsToken)];
    let ledger: DedupLedger | undefined;
    // Ingest first: at ingest rates, its requests should not be matched against every API route on the way.
    if (serves(config, 'gateway')) {
      // On the embedded log this process is the only gateway (the log has one owner), so rate windows
      // are counted in memory; with the SQLite store beside that log, nothing else can write its dedup
      // journal either, so claims are decided in memory and appended (docs/DECISIONS.md).
      if (config.kafkaBrokers || config.databaseUrl) ledger = createDedupLedger(store.sql);
      else {
        const journal = await openDedupJournal(store.sql, { onPurgeError: (error) => logger.warn({ err: error }, 'dedup journal purge failed') });
        closers.push(() => journal.close());
        metrics.observeDedupIndex(journal.indexedKeys);
        ledger = journal;
      }
      const rateWindows = config.kafkaBrokers ? createRateWindows(store.sql) : createMemoryRateWindows();
      routers.push(
        ingestRouter({
          deps: { resolveSource: resolver.get, dedup: ledger, rateWindows, publish: (topic, message) => publish(topic, [message]), now: Date.now },
          metrics,
          trustProxy: config.trustProxy,
          publicUrl: config.publicUrl,
        }),
      );
    }
    if (serves(config, 'api')) {
      const httpSender = createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations });
      closers.push(() => httpSender.close());
      routers.push(
        apiRouter({
          store,
          secrets,
          publicUrl: config.publicUrl,
          logger,
          now: Date.now,
          announce,
          publish,
          routesFor: routeTargets.forSource,
          httpSender,
          circuitState: (destinationId) => deliverer?.circuitState(destinationId) ?? 'closed',
        }),
      );
      const janitor = createJanitor({
        sql: store.sql,
        dedup: createDedupLedger(store.sql),
        rateWindows: createRateWindows(store.sql),
        payloadRetentionMs: config.payloadRetentionDays * DAY_MS,
        eventRetentionMs: config.eventRetentionDays * DAY_MS,
        logger,
      });
      janitor.start();
      closers.push(() => janitor.stop());
    }
    const server = await startHttpServer(createHttpApp(routers, logger), { port: config.port, host: config.host });
    closers.push(() => server.close());
    return { url: server.url, port: server.port, store, broker, bootstrap, dedup: ledger, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
