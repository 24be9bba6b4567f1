import type Router from '@koa/router';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Broker, BrokerRecord, OutgoingMessage } from '../../libs/broker/broker.js';
import { createBroker } from '../../libs/broker/create-broker.js';
import type { CircuitState } from '../../libs/delivery/circuit-breakers.js';
import type { Config } from '../../libs/config/config.js';
import { createHttpApp } from '../../libs/http/http-app.js';
import { startHttpServer } from '../../libs/http/http-server.js';
import { probeRouter } from '../../libs/http/probe-router.js';
import { createLogger, type Logger } from '../../libs/logging/logger.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { metricsRouter } from '../../libs/metrics/metrics-router.js';
import { decodeConfigChange, encodeConfigChange, type ConfigChange, type ResourceChange } from '../../libs/pipeline/config-change.js';
import { createDeadLetters, deadLetterPoison } from '../../libs/pipeline/dead-letter.js';
import { handleIsolatingPoison } from '../../libs/pipeline/poison-records.js';
import { sealedPayload } from '../../libs/payload/stored-payload.js';
import { makeDataDirPrivate } from '../../libs/storage/private-data-dir.js';
import { loadOrCreateKeyFile } from '../../libs/secrets/key-file.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { createDedupLedger, type DedupLedger } from '../../libs/store/dedup-ledger.js';
import { openDedupJournal } from '../../libs/store/dedup-journal.js';
import { largestPayloadBytes, planLimits } from '../../libs/config/plan-limits.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../libs/broker/embedded/embedded-broker.js';
import { createMemoryRateWindows } from '../../libs/store/memory-rate-windows.js';
import { createRateWindows } from '../../libs/store/rate-windows.js';
import { openStore, type Store } from '../../libs/store/store.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import { apiRouter } from '../api/api-app.js';
import { createKeyAuthenticator } from '../api/keys/key-authenticator.js';
import { loadConsoleAssets } from '../console/console-assets.js';
import { consoleRouter } from '../console/console-router.js';
import { createReplayRunner } from '../api/replays/replay-runner.js';
import { replayJobEvents } from '../api/replays/replay-service.js';
import { createJanitor } from '../janitor/janitor.js';
import { startEventCountFolding } from '../../libs/store/event-counts.js';
import { DAY_MS } from '../janitor/retention-sweep.js';
import { createDeliverer, type Deliverer } from '../deliverer/deliverer.js';
import { startLagReporter } from './lag-reporter.js';
import { readinessCheck } from './readiness.js';
import { createStoreDeliveryLookup } from '../../libs/delivery/store-lookup.js';
import { createGoneDestinations } from '../deliverer/gone-destinations.js';
import { createSqlSourceLines } from '../deliverer/source-lines.js';
import { createRecorderConsumer } from '../recorder/recorder-consumer.js';
import { createRouterConsumer } from '../router/router-consumer.js';
import { createSearchIndexer } from '../router/search-indexer.js';
import { createRouteTargets } from '../../libs/routing/route-targets.js';
import { ingestRouter } from '../gateway/ingest-router.js';
import { createSourceResolver } from '../gateway/source-resolver.js';
import { bootstrapOrganization, type BootstrapResult } from './bootstrap.js';
import { CONFIG_TOPIC, configGroupId, CORE_TOPICS, DELIVERER_GROUP, DESTINATION_PARTITIONS, destinationTopic, FRESH_GROUP, RECORDER_GROUP, RETRY_GROUP, ROUTER_GROUP } from '../../libs/pipeline/topology.js';

export interface RunningRelay {
  url: string;
  port: number;
  store: Store;
  broker: Broker;
  bootstrap: BootstrapResult;
  /** The gateway's dedup ledger, when this process runs the gateway. */
  dedup?: DedupLedger;
  /** Every method and path pattern the HTTP server routes (`/api/sources/:id`), for checks that must cover them all. */
  endpoints: readonly Endpoint[];
  close(): Promise<void>;
}

export interface Endpoint {
  method: string;
  path: string;
}

export interface RelayOptions {
  logger?: Logger;
  /** The gateway's clock (rate windows, receipt times); tests hold it still to put a burst in one window. */
  gatewayClock?: () => number;
  /** Event ids a replay job copies into its snapshot per step (the runner's default when not given). */
  replaySnapshotChunk?: number;
}

const serves = (config: Config, role: Config['role']) => config.role === 'all' || config.role === role;

/**
 * Every process needs every config change, so each has a group of its own. The id is stable across
 * restarts of the same instance (a fresh group per start would leave abandoned groups pinning old
 * records); only an ephemeral port (tests) gets a random one.
 */
function configGroupOf(config: Config): string {
  const instance = config.port === 0 ? randomBytes(6).toString('hex') : `${hostname()}-${config.port}`;
  return configGroupId(config.role, instance);
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
    const loosened = makeDataDirPrivate(config.dataDir).fixed;
    if (loosened.length > 0) logger.warn({ paths: loosened }, 'The data directory or files in it were readable by others; made private (directory 0700, files 0600)');
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
        onGroupJoin: ({ groupId, durationMs, partitions }) => {
          metrics.consumerGroupJoins.observe({ group: groupId }, durationMs / 1000);
          logger.info({ groupId, durationMs, partitions }, 'Joined consumer group');
        },
      },
      // A raised enterprise payload limit must still fit in one record.
      embedded: { maxMessageBytes: Math.max(DEFAULT_MAX_MESSAGE_BYTES, largestPayloadBytes(limits)) },
    });
    closers.push(() => broker.close());
    // The files this start created (store, log, their WAL files) get the mode the rest already has.
    makeDataDirPrivate(config.dataDir);
    await broker.admin().ensureTopics(CORE_TOPICS);
    const producer = broker.producer();
    // The gateway's, router's and api's publishes go through here, so their latency is measured; the
    // deliverer's attempt reporter times its own. Not timed: the retry tiers moving jobs on, and the
    // recorder's dead letters of records it cannot decode.
    const publish = async (topic: string, messages: OutgoingMessage[]) => {
      const stopTimer = metrics.brokerPublishDuration.startTimer({ topic });
      await producer.send(topic, messages);
      stopTimer();
    };
    const deadLetters = createDeadLetters(publish, metrics.deadLetters);
    const bootstrap = await bootstrapOrganization(store, config, logger);

    const resolver = createSourceResolver({
      lookup: { organizationBySlug: (slug) => store.organizations.bySlug(slug), sourceBySlug: (orgId, slug) => store.sources.findOneBy(orgId, { slug }) },
      secrets,
      limits,
    });
    const routeTargets = createRouteTargets(store.sql);
    const apiKeys = createKeyAuthenticator({
      keys: store.apiKeys,
      organizations: store.organizations,
      onTouchError: (error) => logger.warn({ err: error }, "could not record an API key's last use"),
    });
    let deliverer: Deliverer | undefined;
    // Refreshing a Kafka subscription means a rebalance (seconds): it runs behind, one at a time, and
    // never holds up the API answer or the config consumer. Jobs wait in their topic meanwhile.
    let delivererRefresh = Promise.resolve();
    // The breaker states deliverers announce, for an api process that runs no deliverer of its own.
    const announcedCircuits = new Map<string, CircuitState>();
    const applyChange = (change: ConfigChange) => {
      // A revoked key stops working in every process that hears this.
      if (change.kind === 'key') return apiKeys.forget(change.id);
      if (change.kind === 'circuit') {
        announcedCircuits.set(change.destinationId, change.state);
        // Not behind the subscription refreshes below: a breaker state is taken on at once.
        deliverer?.refresh(change).catch((error: unknown) => logger.warn({ err: error, change }, 'circuit state not taken on'));
        return;
      }
      // A changed or deleted destination starts over with a closed circuit (the deliverers reset it).
      if (change.kind === 'destination') announcedCircuits.delete(change.id);
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
      groupId: configGroupOf(config),
      topics: [CONFIG_TOPIC],
      handleBatch: (batch) => {
        const applyAll = async (records: BrokerRecord[]) => records.map(decodeConfigChange).forEach(applyChange);
        return handleIsolatingPoison(batch.records, {
          all: applyAll,
          one: (record) => applyAll([record]),
          deadLetter: (record, error) => deadLetterPoison(deadLetters, record, error),
        });
      },
    });
    await configConsumer.start();
    closers.push(() => configConsumer.stop());
    const announce = async (change: ResourceChange) => {
      applyChange(change);
      await publish(CONFIG_TOPIC, [encodeConfigChange(change)]);
    };
    // Started recorder first and router last, so closing (in reverse) stops taking new work first and
    // lets the recorder store the outcomes of the deliverer's last requests.
    const groups: string[] = [];
    if (serves(config, 'recorder')) {
      const recorder = createRecorderConsumer(broker, store.sql, deadLetters);
      await recorder.start();
      closers.push(() => recorder.stop());
      groups.push(RECORDER_GROUP);
    }
    if (serves(config, 'deliverer')) {
      const running = createDeliverer({
        broker,
        lookup: createStoreDeliveryLookup(store, secrets),
        secrets,
        sender: createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations }),
        metrics,
        gone: createGoneDestinations(store.sql, announce),
        lines: createSqlSourceLines(store.sql),
        logger,
        jitter: config.retryJitter,
        maxInFlightPerSource: config.maxInFlightPerSource,
        // Several deliverers share a destination's partitions on Kafka: its rate is counted in the store.
        ...(config.kafkaBrokers ? { sharedRateWindows: createRateWindows(store.sql) } : {}),
        // Published, not awaited: a breaker's change must not wait on the broker (or fail a delivery).
        onCircuitChange: (destinationId, state) =>
          void publish(CONFIG_TOPIC, [encodeConfigChange({ kind: 'circuit', destinationId, state })]).catch((error: unknown) =>
            logger.warn({ err: error, destinationId, state }, 'circuit state announcement failed'),
          ),
      });
      // Destinations created while no deliverer ran may have no topic yet; a pattern subscription needs one.
      const destinationIds = await store.sql.all<{ id: string }>('SELECT id FROM destinations');
      await broker.admin().ensureTopics(destinationIds.map(({ id }) => ({ topic: destinationTopic(id), partitions: DESTINATION_PARTITIONS })));
      await running.start();
      closers.push(() => running.stop());
      deliverer = running;
      groups.push(DELIVERER_GROUP, FRESH_GROUP, RETRY_GROUP);
    }
    if (serves(config, 'router')) {
      const router = createRouterConsumer(broker, {
        sql: store.sql,
        routesFor: routeTargets.forSource,
        publish,
        now: Date.now,
        secrets,
        deadLetters,
        freshDestinations: Boolean(config.kafkaBrokers),
      });
      await router.start();
      closers.push(() => router.stop());
      groups.push(ROUTER_GROUP);
      // The router stores events, so it indexes them for search, behind its inserts (docs/DECISIONS.md).
      const searchIndexer = createSearchIndexer({ sql: store.sql, lag: metrics.searchIndexLag, logger });
      searchIndexer.start();
      closers.push(() => searchIndexer.stop());
    }
    if (groups.length > 0) {
      const lag = startLagReporter({ admin: broker.admin(), groups, gauge: metrics.consumerLag, logger });
      closers.push(async () => lag.stop());
    }

    // Every role reaches the broker (the api role announces config changes), so every process checks both.
    const ready = readinessCheck([
      { name: 'store', ping: () => store.ping() },
      { name: 'broker', ping: () => broker.admin().listTopics() },
    ]);
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
          deps: {
            resolveSource: resolver.get,
            dedup: ledger,
            rateWindows,
            publish: (topic, message) => publish(topic, [message]),
            seal: (body) => sealedPayload(body, secrets).bytes,
            now: options.gatewayClock ?? Date.now,
          },
          metrics,
          trustProxy: config.trustProxy,
          publicUrl: config.publicUrl,
        }),
      );
    }
    if (serves(config, 'api')) {
      const httpSender = createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations });
      closers.push(() => httpSender.close());
      const replayDeps = { store, secrets, now: Date.now, publish, routesFor: routeTargets.forSource };
      const replayRunner = createReplayRunner({
        sql: store.sql,
        replayEvents: replayJobEvents(replayDeps),
        logger,
        snapshotChunk: options.replaySnapshotChunk,
      });
      routers.push(
        apiRouter({
          ...replayDeps,
          apiKeys,
          publicUrl: config.publicUrl,
          trustProxy: config.trustProxy,
          logger,
          announce,
          httpSender,
          circuitState: (destinationId) => deliverer?.circuitState(destinationId) ?? announcedCircuits.get(destinationId) ?? 'closed',
          wakeReplays: () => replayRunner.wake(),
        }),
      );
      routers.push(consoleRouter(await loadConsoleAssets()));
      // Jobs left running by a previous process go on from their cursors.
      replayRunner.start();
      closers.push(() => replayRunner.stop());
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
      // Beside the API, which reads the counts: folded often enough that a count sums a few rows per key.
      const folding = startEventCountFolding({ sql: store.sql, logger });
      closers.push(() => folding.stop());
    }
    const server = await startHttpServer(createHttpApp(routers, logger), { port: config.port, host: config.host });
    closers.push(() => server.close());
    const endpoints = routers.flatMap((router) =>
      router.stack.flatMap((layer) => (typeof layer.path === 'string' ? layer.methods.map((method) => ({ method, path: layer.path as string })) : [])),
    );
    return { url: server.url, port: server.port, store, broker, bootstrap, dedup: ledger, endpoints, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
