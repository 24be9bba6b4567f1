import type { Logger } from '../../libs/logging/logger.js';
import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { OrganizationRow } from '../../libs/store/entities/organization.js';
import type { Store } from '../../libs/store/store.js';

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
}

/** The authenticated caller: every domain function acts inside this organization only. */
export interface Tenant {
  org: OrganizationRow;
}
