import { createInvalidatingCache } from '../../libs/cache/invalidating-cache.js';
import { DEFAULT_PLAN_LIMITS, type PlanLimits, type PlanLimitTable } from '../../libs/config/plan-limits.js';
import { parseIpRule, type IpRule } from '../../libs/net/ip-rules.js';
import type { SecretBox } from '../../libs/secrets/secret-box.js';
import type { VerificationConfig } from '../../libs/signatures/verification-config.js';
import type { OrganizationRow } from '../../libs/store/entities/organization.js';
import type { SourceRow } from '../../libs/store/entities/source.js';

/** Everything ingest needs about a source, with its secret opened and its IP rules parsed once. */
export interface ResolvedSource {
  org: Pick<OrganizationRow, 'id' | 'slug' | 'plan'>;
  source: SourceRow;
  verification: VerificationConfig;
  /** The secret before a rotation with a grace period, and when it stops verifying. */
  previousSecret?: { secret: string; expiresAt: number };
  ipRules: IpRule[];
  limits: PlanLimits;
}

/** The lookups the resolver needs; the store's repositories fit. */
export interface SourceLookup {
  organizationBySlug(slug: string): Promise<OrganizationRow | null>;
  sourceBySlug(orgId: string, slug: string): Promise<SourceRow | null>;
}

export interface SourceResolverOptions {
  lookup: SourceLookup;
  secrets: SecretBox;
  /** Limits per plan: `planLimits(config)`, for the enterprise limits the operator set. */
  limits?: PlanLimitTable;
  /** Safety net only: changes made through the API invalidate at once (`invalidate`). */
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

function resolve(org: OrganizationRow, source: SourceRow, secrets: SecretBox, limits: PlanLimitTable): ResolvedSource {
  const verification = {
    ...source.verification,
    ...(source.secretSealed === null ? {} : { secret: secrets.open(source.secretSealed) }),
  } as VerificationConfig;
  const rules = source.ipFilterMode === 'allowlist' ? source.ipAllowlist : source.ipFilterMode === 'denylist' ? source.ipDenylist : [];
  return {
    org: { id: org.id, slug: org.slug, plan: org.plan },
    source,
    verification,
    ...(source.previousSecretSealed && typeof source.previousSecretExpiresAt === 'number' ? { previousSecret: { secret: secrets.open(source.previousSecretSealed), expiresAt: source.previousSecretExpiresAt } } : {}),
    ipRules: rules.map(parseIpRule).filter((rule): rule is IpRule => rule !== undefined),
    limits: limits[org.plan],
  };
}

/**
 * Resolves `<org slug>/<source slug>` through a cache. Unknown slugs are cached too (as null), so a
 * flood of requests to a wrong URL does not reach the database; any configuration change clears all.
 */
export function createSourceResolver(options: SourceResolverOptions) {
  const limits = options.limits ?? DEFAULT_PLAN_LIMITS;
  const cache = createInvalidatingCache({
    load: async (_key: string, orgSlug: string, sourceSlug: string): Promise<ResolvedSource | null> => {
      const org = await options.lookup.organizationBySlug(orgSlug);
      const source = org ? await options.lookup.sourceBySlug(org.id, sourceSlug) : null;
      return org && source ? resolve(org, source, options.secrets, limits) : null;
    },
    ttlMs: options.ttlMs ?? 30_000,
    maxEntries: options.maxEntries ?? 10_000,
    now: options.now,
  });
  return {
    get: (orgSlug: string, sourceSlug: string): Promise<ResolvedSource | null> => cache.get(`${orgSlug}/${sourceSlug}`, orgSlug, sourceSlug),
    invalidate: (): void => cache.invalidate(),
  };
}

export type SourceResolver = ReturnType<typeof createSourceResolver>;
