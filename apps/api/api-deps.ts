import type { OutgoingMessage } from '../../libs/broker/broker.js';
import type { CheckTarget } from '../../libs/delivery/allowed-target.js';
import type { TargetSender } from '../../libs/delivery/target-port.js';
import type { HttpSender } from '../../libs/delivery/send-request.js';
import type { CircuitState } from '../../libs/delivery/circuit-breakers.js';
import type { Logger } from '../../libs/logging/logger.js';
import type { ResourceChange } from '../../libs/pipeline/config-change.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { Store } from '../../libs/store/store.js';
import type { RoutedTarget } from '../../libs/routing/route-targets.js';
import type { KeyAuthenticator } from '../../libs/keys/key-authenticator.js';
import type { Tenant } from '../../libs/tenancy/tenant.js';
import type { KeyRateLimits } from './key-rate-limits.js';
import type { TransformationRunner } from '../../libs/transformations/route-transformations.js';
import type { PayloadViews } from './events/payload-views.js';

/** What the management API needs, wired by the composition root. */
export interface ApiDeps {
  store: Store;
  /** Checks API keys (cached per process; revocations are announced and apply at once). */
  apiKeys: KeyAuthenticator;
  secrets: SecretBox;
  /** RELAY_PUBLIC_URL, e.g. `https://hooks.example.com`: the base of every webhookUrl when set. */
  publicUrl?: string;
  /** RELAY_TRUST_PROXY: whether (and how many) proxies' X-Forwarded-Proto/-Host name the caller's origin. */
  trustProxy: number;
  logger: Logger;
  now: () => number;
  /** Applies a configuration change here and tells every other process (gateway caches, deliverer subscriptions). */
  announce(change: ResourceChange): Promise<void>;
  /** A destination's circuit as the deliverers announced it, in this process or another (`closed` until one does). */
  circuitState(destinationId: string): CircuitState;
  /** Publishes delivery jobs (replays); resolves once the broker holds them durably. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  /** As the router's: on Kafka, jobs of destinations without ordering go through the lanes (`withLane`). */
  lanes: boolean;
  /** The destinations a source's events go to now (enabled routes), as the router resolves them. */
  routesFor(sourceId: string): Promise<RoutedTarget[]>;
  /** Sends destination tests of every type, with the deliverer's connection rules. */
  testSender: TargetSender;
  /** Sends notification channel tests: the HTTP sender under `testSender`, with the same address rules. */
  httpSender: HttpSender;
  /** Runs transformations: validates saved code, `POST /api/transformations/test`, and replays. */
  transformations: TransformationRunner;
  /** Refuses private and metadata targets when they are saved (RELAY_BLOCK_PRIVATE_DESTINATIONS). */
  checkTarget: CheckTarget;
  /** Tells the replay runner a job was created, so it starts without waiting for its next look. */
  wakeReplays(): void;
  /** Each key's request rate in this process (RELAY_API_REQUESTS_PER_SECOND). */
  keyRateLimits: KeyRateLimits;
  /** RELAY_MAX_ROUTES_PER_SOURCE: enabled routes per source, and destinations one event is replayed to at once. */
  maxRoutesPerSource: number;
  /** Payload views, large ones made off the thread that serves ingest. */
  payloadViews: PayloadViews;
}

/** A caller of the HTTP API: its organization, and how it reaches the relay. */
export interface Caller extends Tenant {
  /** Base of webhookUrl for this caller: RELAY_PUBLIC_URL, or the origin the request reached the relay at. */
  publicUrl: string;
}
