import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Broker } from '../../libs/broker/broker.js';
import { createBroker } from '../../libs/broker/create-broker.js';
import { pipelineThreadCount, type Config } from '../../libs/config/config.js';
import { ConfigError } from '../../libs/errors/errors.js';
import type { PlanLimitTable } from '../../libs/config/plan-limits.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import { createHttpApp } from '../../libs/http/http-app.js';
import { startHttpServer, type RunningServer } from '../../libs/http/http-server.js';
import { acceptQueueLength } from '../../libs/http/accept-queue.js';
import { probeRouter } from '../../libs/http/probe-router.js';
import { createLogger, type Logger } from '../../libs/logging/logger.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { metricsRouter } from '../../libs/metrics/metrics-router.js';
import { createDeadLetters } from '../../libs/pipeline/dead-letter.js';
import { makeDataDirPrivate } from '../../libs/storage/private-data-dir.js';
import { loadOrCreateKeyFile } from '../../libs/secrets/key-file.js';
import { createSecretBox } from '../../libs/secrets/secret-box.js';
import { largestPayloadBytes, planLimits } from '../../libs/config/plan-limits.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../libs/broker/embedded/embedded-broker.js';
import { openStore, type Store } from '../../libs/store/store.js';
import type { Infrastructure, Role, RoleBuilder, RoleTuning } from '../../libs/roles/role.js';
import { configGroupId, CORE_TOPICS } from '../../libs/pipeline/topology.js';
import { buildApiRole } from '../api/api-role.js';
import { buildDelivererRole } from '../deliverer/deliverer-role.js';
import { buildGatewayRole } from '../gateway/gateway-role.js';
import { buildConsoleRole } from '../console/console-role.js';
import { buildJanitorRole } from '../janitor/janitor-role.js';
import { buildRecorderRole } from '../recorder/recorder-role.js';
import { buildRouterRole } from '../router/router-role.js';
import { buildSearchIndexerRole } from '../router/search-indexer-role.js';
import { bootstrapOrganization, type BootstrapResult } from './bootstrap.js';
import { createConfigChannel } from './config-channel.js';
import { startLagReporter } from './lag-reporter.js';
import { pipelineThreads, type PipelineThreadsOptions } from './pipeline-threads.js';
import { closerStack, storeOptions, type Closers } from './thread-parts.js';
import { readinessCheck } from './readiness.js';
import { createRelayTracer } from '../../libs/tracing/relay-tracer.js';

export interface RunningRelay {
  url: string;
  port: number;
  /** Where `/metrics` is served (METRICS_PORT, METRICS_HOST); undefined when METRICS_PORT is `off`. */
  metricsUrl?: string;
  store: Store;
  broker: Broker;
  bootstrap: BootstrapResult;
  /** The roles this process started, in start order; each offers what its own interface says (`isGatewayRole`). */
  roles: readonly Role[];
  /** Every method and path pattern the HTTP server routes (`/api/sources/:id`), for checks that must cover them all. */
  endpoints: readonly Endpoint[];
  close(): Promise<void>;
}

export interface Endpoint {
  method: string;
  path: string;
}

export interface RelayOptions extends RoleTuning {
  logger?: Logger;
  /** The pipeline threads' restart timer and start listener; tests end a thread and time its restart. */
  pipelineThreads?: Pick<PipelineThreadsOptions, 'schedule' | 'onThreadStart'>;
}

type RoleName = Exclude<Config['role'], 'all'>;

/**
 * Where a process of role `all` with more than one thread (RELAY_THREADS) runs a part: on its main thread
 * (webhooks and API calls), on its pipeline threads, or on the search indexer's thread, which
 * pipeline-threads.ts starts beside them with search-indexer-thread.ts as its entry.
 */
type Placement = 'main' | 'pipeline' | 'search indexer thread';

/**
 * The roles a process can run, in start order; they stop in reverse. Recorder first and router last of
 * the consumers, so stopping takes no new work first and the recorder stores the outcomes of the
 * deliverer's last requests. The gateway's routes come before the API's: at ingest rates, its requests
 * should not be matched against every API route on the way. The console and the janitor run where the API does.
 */
const ROLE_TABLE: readonly { role: RoleName; build: RoleBuilder; whenThreaded: Placement }[] = [
  { role: 'recorder', build: buildRecorderRole, whenThreaded: 'pipeline' },
  { role: 'deliverer', build: buildDelivererRole, whenThreaded: 'pipeline' },
  { role: 'router', build: buildRouterRole, whenThreaded: 'pipeline' },
  { role: 'router', build: buildSearchIndexerRole, whenThreaded: 'search indexer thread' },
  { role: 'gateway', build: buildGatewayRole, whenThreaded: 'main' },
  { role: 'api', build: buildApiRole, whenThreaded: 'main' },
  { role: 'api', build: buildConsoleRole, whenThreaded: 'main' },
  { role: 'api', build: buildJanitorRole, whenThreaded: 'main' },
];

/**
 * Every process needs every config change, so each has a group of its own. The id is stable across
 * restarts of the same instance (a fresh group per start would leave abandoned groups pinning old
 * records); only an ephemeral port (tests) gets a random one.
 */
export function configGroupOf(config: Config, thread?: string): string {
  const instance = config.port === 0 ? randomBytes(6).toString('hex') : `${hostname()}-${config.port}`;
  return configGroupId(config.role, thread === undefined ? instance : `${instance}-${thread}`);
}

/** What a process opens once, before its roles: the store, the broker and what the roles share. */
interface Backends {
  store: Store;
  broker: Broker;
  secrets: SecretBox;
  limits: PlanLimitTable;
}

/**
 * Opens the store and the broker: `broker` when one is given (a pipeline thread's, over the port of the
 * thread that owns the embedded log), else Kafka or the embedded log as configured, timing every publish and every consumer's batches.
 */
export async function openBackends(config: Config, logger: Logger, metrics: RelayMetrics, closers: Closers, broker?: Broker): Promise<Backends> {
  const store = await openStore(storeOptions(config, logger));
  closers.push(() => store.close());
  const secrets = createSecretBox(config.encryptionKey ?? (await loadOrCreateKeyFile(config.dataDir)));
  const limits = planLimits(config);
  if (!broker) {
    broker = await createBroker({
      kafkaBrokers: config.kafkaBrokers,
      clientId: config.kafkaClientId,
      dataDir: config.dataDir,
      fsync: config.fsync,
      logger,
      kafka: {
        topicPrefix: config.kafkaTopicPrefix,
        maxWaitTimeInMs: config.kafkaMaxWaitMs,
        sessionTimeoutMs: config.kafkaSessionTimeoutMs,
        gatherMs: config.kafkaIngestGatherMs,
        heartbeatIntervalMs: Math.floor(config.kafkaSessionTimeoutMs / 10),
        onGroupJoin: ({ groupId, durationMs, partitions }) => {
          metrics.consumerGroupJoins.observe({ group: groupId }, durationMs / 1000);
          logger.info({ groupId, durationMs, partitions }, 'Joined consumer group');
        },
      },
      // A raised enterprise payload limit must still fit in one record.
      embedded: { maxMessageBytes: Math.max(DEFAULT_MAX_MESSAGE_BYTES, largestPayloadBytes(limits)) },
      onPublish: ({ topic, durationMs }) => metrics.brokerPublishDuration.observe({ topic }, durationMs / 1000),
      onBatch: ({ groupId, waitedMs, durationMs }) => {
        metrics.consumerRecordWait.observe({ group: groupId }, waitedMs / 1000);
        metrics.consumerBatchDuration.observe({ group: groupId }, durationMs / 1000);
      },
    });
    const opened = broker;
    closers.push(() => opened.close());
  }
  return { store, broker, secrets, limits };
}

/**
 * Builds the roles over the backends, joins the config channel as group `configGroup`, starts the roles
 * in table order (each stops in reverse) and reports the lag of their consumer groups.
 */
export async function startRoles(
  config: Config,
  backends: Backends,
  parts: { logger: Logger; metrics: RelayMetrics; closers: Closers; configGroup: string; tuning?: RoleTuning; thread?: string },
  builders: RoleBuilder[],
): Promise<Role[]> {
  const { logger, metrics, closers } = parts;
  const { store, broker, secrets, limits } = backends;
  const tracer = createRelayTracer(config.tracing);
  // Closed last: the roles' final spans are exported on the way out.
  closers.push(() => tracer.close());
  const producer = broker.producer();
  const publish: Infrastructure['publish'] = (topic, messages, options) => producer.send(topic, messages, options);
  const deadLetters = createDeadLetters(publish, metrics.deadLetters);
  const configChannel = createConfigChannel({ broker, publish, deadLetters, groupId: parts.configGroup });
  const infrastructure: Infrastructure = {
    config,
    logger,
    metrics,
    store,
    broker,
    secrets,
    limits,
    publish,
    deadLetters,
    announce: configChannel.announce,
    tuning: parts.tuning ?? {},
    thread: parts.thread,
    tracer,
  };

  const roles: Role[] = [];
  for (const build of builders) roles.push(await build(infrastructure));
  for (const role of roles) if (role.onConfigChange) configChannel.listen(role.onConfigChange);
  await configChannel.start();
  closers.push(() => configChannel.stop());
  for (const role of roles) {
    // A role that failed to start may hold what it opened while building: stopping it releases that.
    closers.push(() => role.stop());
    await role.start();
  }
  const groups = roles.flatMap((role) => role.consumerGroups ?? []);
  if (groups.length > 0) {
    const lag = startLagReporter({ admin: broker.admin(), groups, gauge: metrics.consumerLag, logger });
    closers.push(async () => lag.stop());
  }
  return roles;
}

/** The roles of `placement`, in table order: a whole process's (its main thread's), or those of a pipeline thread. */
export function roleBuilders(config: Config, placement: 'process' | 'pipeline thread'): RoleBuilder[] {
  const threaded = pipelineThreadCount(config) > 0;
  return ROLE_TABLE.filter(({ role, whenThreaded }) => {
    if (placement === 'pipeline thread') return whenThreaded === 'pipeline';
    if (config.role !== 'all') return config.role === role;
    return !threaded || whenThreaded === 'main';
  }).map(({ build }) => build);
}

/** A port another process holds is the operator's to fix: said plainly, naming the setting, with no stack. */
function portInUse(error: unknown, config: Pick<Config, 'host' | 'port'>): unknown {
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') return error;
  return new ConfigError('PORT', `${config.host}:${config.port} is already in use by another process; stop it or set another PORT`);
}

/**
 * `/metrics` on a port of its own (DESIGN 7, Hardening): the metrics name every organization's
 * destinations, so they are not served where providers and API clients reach the relay.
 */
async function startMetricsServer(config: Config, registry: Parameters<typeof metricsRouter>[0], logger: Logger): Promise<RunningServer | undefined> {
  if (config.metricsPort === 'off') return undefined;
  return startHttpServer(createHttpApp([metricsRouter(registry, config.metricsToken)], logger), { port: config.metricsPort, host: config.metricsHost });
}

/** The composition root: wires config, store, broker and metrics into the roles this process runs. */
export async function startRelay(config: Config, options: RelayOptions = {}): Promise<RunningRelay> {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const metrics = createRelayMetrics();
  const closers = closerStack(logger);
  try {
    const loosened = makeDataDirPrivate(config.dataDir).fixed;
    if (loosened.length > 0) logger.warn({ paths: loosened }, 'The data directory or files in it were readable by others; made private (directory 0700, files 0600)');
    if (config.databaseUrl && !config.encryptionKey) {
      logger.warn('RELAY_ENCRYPTION_KEY is not set: secrets are sealed with a key file in RELAY_DATA_DIR, which other machines sharing this database cannot read');
    }
    const backends = await openBackends(config, logger, metrics, closers);
    const { store, broker } = backends;
    await broker.admin().ensureTopics(CORE_TOPICS);

    const builders = roleBuilders(config, 'process');
    const threads = pipelineThreadCount(config);
    // First in the table: started before the gateway takes webhooks, stopped after it and the API.
    const pipeline = threads > 0 ? pipelineThreads({ ...options.pipelineThreads, config, broker, logger, count: threads }) : undefined;
    if (pipeline) builders.unshift(() => pipeline.role);
    const roles = await startRoles(config, backends, { logger, metrics, closers, configGroup: configGroupOf(config), tuning: options }, builders);
    // The files this start created (store, log, the gateway's dedup journal, their WAL files) get the mode
    // the rest already has, before the server takes a request.
    makeDataDirPrivate(config.dataDir);

    // Every role reaches the broker (the api role announces config changes), so every process checks both.
    const ready = readinessCheck([
      { name: 'store', ping: () => store.ping() },
      { name: 'broker', ping: () => broker.admin().listTopics() },
      ...(pipeline ? [{ name: 'pipeline threads', ping: () => pipeline.ping() }] : []),
    ]);
    const exposed = pipeline ? pipeline.metricsWith(metrics.registry) : metrics.registry;
    const metricsServer = await startMetricsServer(config, exposed, logger);
    if (metricsServer) closers.push(() => metricsServer.close());
    const routers = [probeRouter(ready), ...roles.flatMap((role) => role.routes ?? [])];
    const server = await startHttpServer(createHttpApp(routers, logger), { port: config.port, host: config.host }).catch((error: unknown) => {
      throw portInUse(error, config);
    });
    closers.push(() => server.close());
    metrics.observeAcceptQueue(server.port, acceptQueueLength);
    const endpoints = routers.flatMap((router) =>
      router.stack.flatMap((layer) => (typeof layer.path === 'string' ? layer.methods.map((method) => ({ method, path: layer.path as string })) : [])),
    );
    // Last, once the relay listens: a start that fails creates no first key it could not print (issue 53, #11).
    const bootstrap = await bootstrapOrganization(store, config, logger);
    return { url: server.url, port: server.port, metricsUrl: metricsServer?.url, store, broker, bootstrap, roles, endpoints, close: closers.closeAll };
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}
