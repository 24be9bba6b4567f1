import type { CircuitState } from '../../libs/delivery/circuit-breakers.js';
import { createHttpSender } from '../../libs/delivery/send-request.js';
import type { Role, RoleBuilder } from '../../libs/roles/role.js';
import { createRouteTargets } from '../../libs/routing/route-targets.js';
import { startEventCountFolding } from '../../libs/store/event-counts.js';
import { apiRouter } from './api-app.js';
import { createKeyAuthenticator } from '../../libs/keys/key-authenticator.js';
import { createReplayRunner } from './replays/replay-runner.js';
import { replayJobEvents } from './replays/replay-service.js';
import { createPayloadViews } from './events/payload-views.js';

export interface ApiRoleOptions {
  /** Event ids a replay job copies into its snapshot per step (the runner's default when not given). */
  replaySnapshotChunk?: number;
}

/** The management API at `/api`, and the replay jobs it starts. */
export function apiRole(options: ApiRoleOptions = {}): RoleBuilder {
  return async ({ config, store, secrets, logger, publish, announce }): Promise<Role> => {
    const apiKeys = createKeyAuthenticator({
      keys: store.apiKeys,
      organizations: store.organizations,
      onTouchError: (error) => logger.warn({ err: error }, "could not record an API key's last use"),
    });
    const routeTargets = createRouteTargets(store.sql);
    // The breaker states deliverers announce, this process's own included.
    const circuits = new Map<string, CircuitState>();
    const httpSender = createHttpSender({ blockPrivateDestinations: config.blockPrivateDestinations });
    const replayDeps = { store, secrets, now: Date.now, publish, routesFor: routeTargets.forSource, lanes: Boolean(config.kafkaBrokers) };
    const replayRunner = createReplayRunner({
      sql: store.sql,
      replayEvents: replayJobEvents(replayDeps),
      logger,
      snapshotChunk: options.replaySnapshotChunk,
    });
    const payloadViews = createPayloadViews();
    const api = apiRouter({
      ...replayDeps,
      apiKeys,
      publicUrl: config.publicUrl,
      trustProxy: config.trustProxy,
      logger,
      announce,
      httpSender,
      circuitState: (destinationId) => circuits.get(destinationId) ?? 'closed',
      wakeReplays: () => replayRunner.wake(),
      payloadViews,
    });
    let folding: { stop(): Promise<void> } | undefined;
    return {
      name: 'api',
      routes: [api],
      async start() {
        // Jobs left running by a previous process go on from their cursors.
        replayRunner.start();
        // Beside the API, which reads the counts: folded often enough that a count sums a few rows per key.
        folding = startEventCountFolding({ sql: store.sql, logger });
      },
      async stop() {
        await folding?.stop();
        await replayRunner.stop();
        await httpSender.close();
        await payloadViews.close();
      },
      onConfigChange(change) {
        if (change.kind === 'circuit') circuits.set(change.destinationId, change.state);
        // A revoked key stops working in every process that hears this.
        else if (change.kind === 'key') apiKeys.forget(change.id);
        else {
          // A changed or deleted destination starts over with a closed circuit (the deliverers reset it).
          if (change.kind === 'destination' && change.action !== 'rotated') circuits.delete(change.id);
          routeTargets.invalidate();
        }
      },
    };
  };
}
