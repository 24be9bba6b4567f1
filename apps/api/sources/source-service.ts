import { ConflictError, NotFoundError, ValidationError } from '../../../libs/errors/errors.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import type { SourceRow } from '../../../libs/store/entities/source.js';
import { generateSigningSecret } from '../../../libs/secrets/signing-secret.js';
import type { VerificationConfigInput } from '../../../libs/signatures/verification-config.js';
import { newSourceRow } from '../../../libs/sources/new-source-row.js';
import { checkSourceConsistency } from '../../../libs/sources/source-consistency.js';
import type { CreateSourceInput, PatchSourceInput } from '../../../libs/sources/source-schema.js';
import { sealVerification } from '../../../libs/sources/source-verification.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps, Caller } from '../api-deps.js';
import { countEvents, countEventsBySource } from '../../../libs/store/event-counts.js';
import { isUniqueViolation } from '../../../libs/store/unique-violation.js';
import { sourceSummary, sourceView } from './source-view.js';

async function requireSource(deps: ApiDeps, tenant: Tenant, id: string): Promise<SourceRow> {
  const row = await deps.store.sources.get(tenant.org.id, id);
  if (!row) throw new NotFoundError(`Source ${id} not found`);
  return row;
}

export async function createSource(deps: ApiDeps, tenant: Caller, input: CreateSourceInput) {
  const row = newSourceRow(deps, tenant.org.id, input);
  if (await deps.store.sources.findOneBy(tenant.org.id, { slug: row.slug })) throw duplicateSlug(row.slug);
  try {
    await deps.store.sources.insert(row);
  } catch (error) {
    // Two concurrent creates with one slug: the unique index decides.
    if (isUniqueViolation(error)) throw duplicateSlug(row.slug);
    throw error;
  }
  await deps.announce({ kind: 'source', action: 'created', orgId: tenant.org.id, id: row.id });
  return sourceView(deps, tenant, row, 0);
}

const duplicateSlug = (slug: string) => new ConflictError('DUPLICATE_SLUG', `A source with slug "${slug}" already exists`);

export async function getSource(deps: ApiDeps, tenant: Caller, id: string) {
  return storedSourceView(deps, tenant, await requireSource(deps, tenant, id));
}

async function storedSourceView(deps: ApiDeps, tenant: Caller, row: SourceRow) {
  return sourceView(deps, tenant, row, await countEvents(deps.store.sql, tenant.org.id, { sourceId: row.id }));
}

export async function listSources(
  deps: ApiDeps,
  tenant: Caller,
  query: PageQuery & { enabled?: boolean; search?: string },
) {
  const page = await deps.store.sources.list(tenant.org.id, query, {
    equals: { enabled: query.enabled },
    search: query.search ? { text: query.search, properties: ['name', 'slug'] } : undefined,
  });
  const counts = await countEventsBySource(deps.store.sql, tenant.org.id, page.rows.map((row) => row.id));
  return { rows: page.rows.map((row) => sourceSummary(deps, tenant, row, counts.get(row.id)!)), total: page.total };
}

export async function updateSource(deps: ApiDeps, tenant: Caller, id: string, patch: PatchSourceInput) {
  const current = await requireSource(deps, tenant, id);
  const { slug, verificationConfig, ...settings } = patch;
  if (slug !== undefined && slug !== current.slug) {
    throw new ValidationError('The slug cannot be changed: it is part of the webhook URL', [
      { field: 'slug', message: 'is immutable after creation' },
    ]);
  }
  const changes: Partial<SourceRow> = { ...settings, updatedAt: deps.now() };
  if (verificationConfig) {
    const sameType = current.verification.type === verificationConfig.type;
    Object.assign(changes, sealVerification(deps, verificationConfig, sameType ? current.secretSealed : null));
  }
  checkSourceConsistency({ ...current, ...changes });
  const updated = await deps.store.sources.update(tenant.org.id, id, changes);
  if (!updated) throw new NotFoundError(`Source ${id} not found`);
  await deps.announce({ kind: 'source', action: 'updated', orgId: tenant.org.id, id });
  return storedSourceView(deps, tenant, updated);
}

export async function deleteSource(deps: ApiDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deps.store.sources.delete(tenant.org.id, id))) throw new NotFoundError(`Source ${id} not found`);
  await deps.announce({ kind: 'source', action: 'deleted', orgId: tenant.org.id, id });
}

/** Replaces the verification secret; the old one stops verifying at once. The new one is shown only here. */
/**
 * A new verification secret. With `graceSeconds`, signatures made with the old one still verify until the
 * grace ends (DESIGN 7 "Secret rotation with overlap"); a secret kept from an earlier rotation is dropped
 * at once, so at most two ever verify.
 */
export async function rotateSourceSecret(deps: ApiDeps, tenant: Tenant, id: string, graceSeconds = 0) {
  const current = await requireSource(deps, tenant, id);
  const type = current.verification.type as VerificationConfigInput['type'];
  if (type === 'none') {
    throw new ValidationError('This source does not verify signatures, so it has no secret to rotate', [
      { field: 'verificationConfig.type', message: 'is none' },
    ]);
  }
  const secret = generateSigningSecret();
  const now = deps.now();
  const expiresAt = graceSeconds > 0 && current.secretSealed !== null ? now + graceSeconds * 1000 : null;
  await deps.store.sources.update(tenant.org.id, id, {
    secretSealed: deps.secrets.seal(secret),
    previousSecretSealed: expiresAt === null ? null : current.secretSealed,
    previousSecretExpiresAt: expiresAt,
    updatedAt: now,
  });
  await deps.announce({ kind: 'source', action: 'rotated', orgId: tenant.org.id, id });
  if (expiresAt === null) {
    return { id, verificationConfig: { type, secret }, message: 'Secret rotated. The previous secret is no longer valid; store this one now, it will not be shown again.' };
  }
  const previousSecretExpiresAt = new Date(expiresAt).toISOString();
  return {
    id,
    verificationConfig: { type, secret },
    previousSecretExpiresAt,
    message: `Secret rotated. Signatures made with the previous secret are accepted until ${previousSecretExpiresAt}; store this one now, it will not be shown again.`,
  };
}
