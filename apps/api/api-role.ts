import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import type { CircuitState } from '../../libs/delivery/circuit-breakers.js';
import { httpTargetSender, type TargetSender } from '../../libs/delivery/target-port.js';
import { createTargetSenders } from '../../libs/delivery/targets/target-senders.js';
import { createTargetCheck, type CheckTarget } from '../../libs/delivery/allowed-target.js';
import { createHttpSender, type HttpSender } from '../../libs/delivery/send-request.js';
import type { Role, RoleBuilder } from '../../libs/roles/role.js';
import { createRouteTargets } from '../../libs/routing/route-targets.js';
import { sealPlainHeaders } from '../../libs/destinations/destination-headers.js';
import { createThreadedSandbox } from '../../libs/transformations/threaded-sandbox.js';
import { transformationRunner } from '../../libs/transformations/transformation-runner.js';
import { startEventCountFolding } from '../../libs/store/event-counts.js';
import { apiRouter } from './api-app.js';
import { createKeyAuthenticator } from '../../libs/keys/key-authenticator.js';
import { createReplayRunner, replayStepSize } from './replays/replay-runner.js';
import { replayJobEvents } from './replays/replay-service.js';
import { createKeyRateLimits } from './key-rate-limits.js';
import { TEST_ANSWER_BODY_BYTES } from './destinations/destination-test.js';
import { createPayloadViews } from './events/payload-views.js';
import { createNotifier } from './notifications/notifier.js';

/** The management API at `/api`, and the replay jobs it starts. */
export const buildApiRole: RoleBuilder = async ({ config, store, secrets, logger, publish, announce, limits, metrics, tuning }): Promise<Role> => {
  const apiKeys = createKeyAuthenticator({
    keys: store.apiKeys,
    organizations: store.organizations,
    onTouchError: (error) => logger.warn({ err: error }, "could not record an API key's last use"),
  });
  const routeTargets = createRouteTargets(store.sql);
  // The breaker states deliverers announce, this process's own included.
  const circuits = new Map<string, CircuitState>();
  // Destination tests and notifications: an answer shows at most the first TEST_ANSWER_BODY_BYTES of a body.
  const httpSender = createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations, responseBodyLimitBytes: TEST_ANSWER_BODY_BYTES });
  const checkTarget = createTargetCheck({ blockPrivateDestinations: config.blockPrivateDestinations, ownBrokers: config.kafkaBrokers });
  const testSender = destinationTestSender(httpSender, checkTarget);
  const transformSandbox = await createThreadedSandbox({ timeoutMs: config.transformTimeoutMs, memoryMb: config.transformMemoryMb });
  const transformations = transformationRunner({ sandbox: transformSandbox, secrets, limits, metrics });
  const replayDeps = {
    store,
    secrets,
    now: Date.now,
    publish,
    routesFor: routeTargets.forSource,
    lanes: Boolean(config.kafkaBrokers),
    maxRoutesPerSource: config.maxRoutesPerSource,
    transformations,
  };
  const replayRunner = createReplayRunner({
    sql: store.sql,
    replayEvents: replayJobEvents(replayDeps),
    logger,
    snapshotChunk: tuning.replaySnapshotChunk,
    stepSize: replayStepSize(config.maxRoutesPerSource),
  });
  const payloadViews = createPayloadViews();
  // The destination tests' sender: the same address rules, and a channel's answer is never kept beyond its first bytes.
  const notifier = createNotifier({ sql: store.sql, secrets, sender: httpSender, metrics, logger });
  const api = apiRouter({
    ...replayDeps,
    apiKeys,
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    logger,
    announce,
    testSender,
    httpSender,
    checkTarget,
    circuitState: (destinationId) => circuits.get(destinationId) ?? 'closed',
    wakeReplays: () => replayRunner.wake(),
    keyRateLimits: createKeyRateLimits({ requestsPerSecond: config.apiRequestsPerSecond, now: tuning.apiClock }),
    payloadViews,
  });
  let folding: { stop(): Promise<void> } | undefined;
  return {
    name: 'api',
    routes: [api],
    async start() {
      const sealed = await sealPlainHeaders(store.sql, secrets);
      if (sealed > 0) logger.info({ destinations: sealed }, 'sealed the header values of destinations written before they were secrets');
      // Jobs left running by a previous process go on from their cursors.
      replayRunner.start();
      // Beside the API, which reads the counts: folded often enough that a count sums a few rows per key.
      folding = startEventCountFolding({ sql: store.sql, logger });
      notifier.start();
    },
    async stop() {
      await notifier.stop();
      await folding?.stop();
      await replayRunner.stop();
      await testSender.close();
      transformSandbox.dispose();
      await payloadViews.close();
    },
    onConfigChange: forgetChanged(circuits, apiKeys, routeTargets),
  };
};

/** What the api role drops when configuration changes elsewhere. */
function forgetChanged(circuits: Map<string, CircuitState>, apiKeys: { forget(id: string): void }, routeTargets: { invalidate(): void }) {
  return (change: ConfigChange): void => {
    if (change.kind === 'circuit') circuits.set(change.destinationId, change.state);
    // A revoked key stops working in every process that hears this.
    else if (change.kind === 'key') apiKeys.forget(change.id);
    else {
      // A changed or deleted destination starts over with a closed circuit (the deliverers reset it).
      if (change.kind === 'destination' && change.action !== 'rotated') circuits.delete(change.id);
      routeTargets.invalidate();
    }
  };
}

/** The sender of destination tests, every type, over the API's HTTP sender. */
function destinationTestSender(httpSender: HttpSender, checkTarget: CheckTarget): TargetSender {
  return createTargetSenders({ http: httpTargetSender(httpSender), checkTarget });
}
