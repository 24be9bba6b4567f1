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
  /** Spans of each webhook's trace (libs/tracing): exported over OTLP only when configured. */
  tracer: RelayTracer;
}

/**
 * One part of the relay (gateway, router, deliverer, recorder, api, janitor), built the same way by
 * `RoleBuilder` and run by the composition root: started in table order, stopped in reverse.
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

export type RoleBuilder<R extends Role = Role> = (infrastructure: Infrastructure) => Promise<R> | R;
