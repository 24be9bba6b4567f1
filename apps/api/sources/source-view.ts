import { maskSecret } from '../../../libs/secrets/mask-secret.js';
import type { SourceRow } from '../../../libs/store/entities/source.js';
import type { ApiDeps, Tenant } from '../api-deps.js';
import { isoTime as iso } from '../iso-time.js';

export function webhookUrl(deps: ApiDeps, tenant: Tenant, row: SourceRow): string {
  return `${deps.publicUrl}/ingest/${tenant.org.slug}/${row.slug}`;
}

/** The verification settings with the secret masked (`****` + last 4). */
function maskedVerification(deps: ApiDeps, row: SourceRow) {
  if (row.secretSealed === null) return row.verification;
  return { ...row.verification, secret: maskSecret(deps.secrets.open(row.secretSealed)) };
}

/**
 * How the gateway treats a source's requests (signatures, rate, IP filter, payload protection, dedup), as
 * both the API view and the export entry show them.
 */
export function ingestSettings(row: SourceRow) {
  return {
    rejectInvalidSignatures: row.rejectInvalidSignatures,
    rateLimitPerMinute: row.rateLimitPerMinute,
    ipFilterMode: row.ipFilterMode,
    ipAllowlist: row.ipAllowlist,
    ipDenylist: row.ipDenylist,
    encryptFields: row.encryptFields,
    maskFields: row.maskFields,
    dedupEnabled: row.dedupEnabled,
    dedupStrategy: row.dedupStrategy,
    dedupWindowHours: row.dedupWindowHours,
    dedupCustomHeader: row.dedupCustomHeader,
  };
}

export function sourceView(deps: ApiDeps, tenant: Tenant, row: SourceRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    provider: row.provider,
    webhookUrl: webhookUrl(deps, tenant, row),
    verificationConfig: maskedVerification(deps, row),
    ...ingestSettings(row),
    enabled: row.enabled,
    eventsCount: row.eventsCount,
    lastEventAt: iso(row.lastEventAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** The list form: id, name, slug, webhookUrl, enabled, eventsCount (SPEC 2.2). */
export function sourceSummary(deps: ApiDeps, tenant: Tenant, row: SourceRow) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    webhookUrl: webhookUrl(deps, tenant, row),
    enabled: row.enabled,
    eventsCount: row.eventsCount,
  };
}
