import type { OutgoingMessage } from '../../libs/broker/broker.js';
import type { HttpSender } from '../../libs/delivery/send-request.js';
import type { CircuitState } from '../../libs/delivery/circuit-breakers.js';
import type { Logger } from '../../libs/logging/logger.js';
import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { OrganizationRow } from '../../libs/store/entities/organization.js';
import type { Store } from '../../libs/store/store.js';
import type { RouteTarget } from '../router/route-targets.js';

/** What the management API needs, wired by the composition root. */
export interface ApiDeps {
  store: Store;
  secrets: SecretBox;
  /** Base of every webhookUrl, e.g. `https://hooks.example.com`. */
  publicUrl: string;
  logger: Logger;
  now: () => number;
  /** Tells every process that cached configuration changed (gateway caches, deliverer subscriptions). */
  announce(change: ConfigChange): Promise<void>;
  /**
   * A destination's circuit as the deliverer in this process sees it. Deliverers in other processes do
   * not report theirs yet; there it reads `closed`.
   */
  circuitState(destinationId: string): CircuitState;
  /** Publishes delivery jobs (replays); resolves once the broker holds them durably. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  /** The destinations a source's events go to now (enabled routes), as the router resolves them. */
  routesFor(sourceId: string): Promise<RouteTarget[]>;
  /** Sends destination tests, with the deliverer's connection rules. */
  httpSender: HttpSender;
}

/** The authenticated caller: every domain function acts inside this organization only. */
export interface Tenant {
  org: OrganizationRow;
}
