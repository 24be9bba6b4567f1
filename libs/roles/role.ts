import type { RelayTracer } from '../tracing/relay-tracer.js';
import type Router from '@koa/router';
import type { Broker, OutgoingMessage, SendOptions } from '../broker/broker.js';
import type { Config } from '../config/config.js';
import type { PlanLimitTable } from '../config/plan-limits.js';
import type { Logger } from '../logging/logger.js';
import type { RelayMetrics } from '../metrics/relay-metrics.js';
import type { ConfigChange } from '../pipeline/config-change.js';
import type { DeadLetters } from '../pipeline/dead-letter.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { Store } from '../store/store.js';

/**
 * Settings of the roles that a test may hold still or shrink (RelayOptions carries them to the
 * composition root); a production start leaves every one unset and each role uses its default.
 */
export interface RoleTuning {
  /** The gateway's clock (rate windows, receipt times); tests hold it still to put a burst in one window. */
  gatewayClock?: () => number;
  /** The API's clock for its per-key rate limits; tests hold it still to put a burst in one instant. */
  apiClock?: () => number;
  /** Event ids a replay job copies into its snapshot per step (the runner's default when not given). */
  replaySnapshotChunk?: number;
}

/** What the composition root opens once and every role builds on. */
export interface Infrastructure {
  config: Config;
  logger: Logger;
  metrics: RelayMetrics;
  store: Store;
  /** Its producer times every publish (`relay_broker_publish_duration_seconds`). */
  broker: Broker;
  secrets: SecretBox;
  limits: PlanLimitTable;
  publish(topic: string, messages: OutgoingMessage[], options?: SendOptions): Promise<void>;
  /** The one way into relay.dead, counted by reason. */
  deadLetters: DeadLetters;
  /** Applies a change in this process at once, then tells every other process (relay.config). */
  announce(change: ConfigChange): Promise<void>;
  tuning: RoleTuning;
  /** The pipeline thread these roles run on (its name); none on a process's main thread. */
  thread?: string;
  /** Spans of each webhook's trace (libs/tracing): exported over OTLP only when configured. */
  tracer: RelayTracer;
}

/**
 * One part of the relay (gateway, router, search indexer, deliverer, recorder, api, console, janitor),
 * built the same way by a `RoleBuilder` constant (`buildXRole`) and run by the composition root: started
 * in table order, stopped in reverse. A role that offers more (the gateway's dedup ledger) says so in an
 * interface of its own, which tests reach through `RunningRelay.roles`.
 */
export interface Role {
  name: string;
  /** Begins consuming or scheduling; building a role has no side effects beyond opening what it owns. */
  start(): Promise<void>;
  /** Stops taking work and finishes what is in flight. */
  stop(): Promise<void>;
  /** HTTP routes the role serves on the process's one port. */
  routes?: Router[];
  /** Consumer groups whose lag the process reports. */
  consumerGroups?: readonly string[];
  /** A configuration change made here or announced by another process. */
  onConfigChange?(change: ConfigChange): void;
}

/** Builds a role over what the composition root opened; a role that needs less may ask for a part (`I`) of it. */
export type RoleBuilder<R extends Role = Role, I = Infrastructure> = (infrastructure: I) => Promise<R> | R;
