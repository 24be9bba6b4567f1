import type { Config } from '../../libs/config/config.js';
import type { Logger } from '../../libs/logging/logger.js';
import type { OrganizationRow } from '../../libs/store/entities/organization.js';
import type { Store } from '../../libs/store/store.js';
import { isUniqueViolation } from '../../libs/store/unique-violation.js';

export interface BootstrapResult {
  org: OrganizationRow;
  /** Set only when this start created the first key; it is printed once and never stored in plaintext. */
  createdKey?: string;
}

/** Two processes starting together may both try; the loser reads the winner's row. */
async function createOrganization(store: Store, config: Pick<Config, 'org' | 'defaultPlan'>): Promise<OrganizationRow> {
  try {
    return await store.organizations.create(config.org, config.defaultPlan);
  } catch (error) {
    const existing = isUniqueViolation(error) ? await store.organizations.bySlug(config.org) : null;
    if (!existing) throw error;
    return existing;
  }
}

/** Ensures the bootstrap organization, `RELAY_API_KEY` as its key, or a first key when none exists. */
export async function bootstrapOrganization(store: Store, config: Pick<Config, 'org' | 'defaultPlan' | 'apiKey'>, logger: Logger): Promise<BootstrapResult> {
  const org = (await store.organizations.bySlug(config.org)) ?? (await createOrganization(store, config));
  if (config.apiKey) {
    const ensured = await store.apiKeys.ensure(org.id, 'RELAY_API_KEY', config.apiKey);
    if (ensured.status === 'revoked') {
      logger.warn(
        { keyId: ensured.keyId, revokedAt: new Date(ensured.revokedAt).toISOString() },
        `RELAY_API_KEY was revoked and is not recreated: it gets 401. Create a new key with \`relay keys create --org ${org.slug}\` (or POST /api/keys with another admin key), then set RELAY_API_KEY to it or unset it`,
      );
    }
    return { org };
  }
  if ((await store.apiKeys.count()) > 0) return { org };
  const { key } = await store.apiKeys.create(org.id, 'bootstrap', 'admin');
  logger.info({ org: org.slug }, 'created the first API key; it is printed once on stdout');
  return { org, createdKey: key };
}
