import { restartStreak } from '../../../libs/issues/failure-streaks.js';
import { z } from 'zod';
import { ConflictError, NotFoundError } from '../../../libs/errors/errors.js';
import { parseInput } from '../../../libs/http/validate.js';
import { retryPolicySchema } from '../../../libs/delivery/retry-schedule.js';
import { generateSigningSecret } from '../../../libs/secrets/signing-secret.js';
import type { DestinationRow } from '../../../libs/store/entities/destination.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import { isUniqueViolation } from '../../../libs/store/unique-violation.js';
import { sealAuth } from '../../../libs/destinations/destination-credentials.js';
import { sealSentHeaders } from '../../../libs/destinations/destination-headers.js';
import type { CreateDestinationInput, PatchDestinationInput } from '../../../libs/destinations/destination-schema.js';
import { newDestinationRow } from '../../../libs/destinations/new-destination-row.js';
import { checkAddresses, patchedTargetInput, resolveTarget } from '../../../libs/destinations/destination-target.js';
import { slugify, uniqueSlug } from '../../../libs/slugs/slugs.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { destinationStats, destinationStatsByIds } from './destination-health.js';
import { destinationSummary, destinationView } from './destination-view.js';

async function requireDestination(deps: ApiDeps, tenant: Tenant, id: string): Promise<DestinationRow> {
  const row = await deps.store.destinations.get(tenant.org.id, id);
  if (!row) throw new NotFoundError(`Destination ${id} not found`);
  return row;
}

const duplicateSlug = (slug: string) => new ConflictError('DUPLICATE_SLUG', `A destination with slug "${slug}" already exists`);

async function insertUnique(deps: ApiDeps, row: DestinationRow): Promise<void> {
  try {
    await deps.store.destinations.insert(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateSlug(row.slug);
    throw error;
  }
}

/** Concurrent creates of one name can pick the same derived slug; the loser takes the next free one. */
const DERIVED_SLUG_ATTEMPTS = 10;

export async function createDestination(deps: ApiDeps, tenant: Tenant, input: CreateDestinationInput) {
  const target = resolveTarget(deps.secrets, input);
  await checkAddresses(deps.checkTarget, target);
  if (input.slug !== undefined) {
    if (await deps.store.destinations.findOneBy(tenant.org.id, { slug: input.slug })) throw duplicateSlug(input.slug);
    const row = newDestinationRow(deps, tenant.org.id, input.slug, input, target.columns);
    await insertUnique(deps, row);
    await announceCreated(deps, row);
    return destinationView(deps, row);
  }
  for (let attempt = 1; ; attempt += 1) {
    const slug = await uniqueSlug(deps.store.destinations, tenant.org.id, slugify(input.name));
    const row = newDestinationRow(deps, tenant.org.id, slug, input, target.columns);
    try {
      await deps.store.destinations.insert(row);
      await announceCreated(deps, row);
      return destinationView(deps, row);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (attempt === DERIVED_SLUG_ATTEMPTS) throw duplicateSlug(slug);
    }
  }
}

const announceCreated = (deps: ApiDeps, row: DestinationRow) => deps.announce({ kind: 'destination', action: 'created', orgId: row.orgId, id: row.id });

export async function getDestination(deps: ApiDeps, tenant: Tenant, id: string) {
  const row = await requireDestination(deps, tenant, id);
  return destinationView(deps, row, await destinationStats(deps, row.id));
}

export async function listDestinations(deps: ApiDeps, tenant: Tenant, query: PageQuery & { enabled?: boolean; search?: string }) {
  const page = await deps.store.destinations.list(tenant.org.id, query, {
    equals: { enabled: query.enabled },
    search: query.search ? { text: query.search, properties: ['name', 'url'] } : undefined,
  });
  const stats = await destinationStatsByIds(deps.store.sql, page.rows.map((row) => row.id), deps.now());
  return { rows: page.rows.map((row) => destinationSummary(row, stats.get(row.id))), total: page.total };
}

/**
 * Enabling clears why and when it was disabled (and the deliverer resumes its held jobs); disabling an
 * enabled destination by hand says `manual`. Disabling one already disabled keeps its reason: a `gone`
 * destination stays recognisable as such.
 */
function enablingChanges(current: DestinationRow, enabled: boolean | undefined, now: number): Partial<DestinationRow> {
  if (enabled === true) return { disabledReason: null, disabledAt: null };
  if (enabled === false && current.enabled) return { disabledReason: 'manual', disabledAt: now };
  return {};
}

export async function updateDestination(deps: ApiDeps, tenant: Tenant, id: string, patch: PatchDestinationInput) {
  const current = await requireDestination(deps, tenant, id);
  const { authType, authConfig, retryPolicy, headers, type, url, target, ...settings } = patch;
  const now = deps.now();
  const changes: Partial<DestinationRow> = { ...settings, ...enablingChanges(current, patch.enabled, now), updatedAt: now };
  const targetInput = patchedTargetInput(current, deps.secrets, { type, url, target, authType });
  if (targetInput) {
    const resolved = resolveTarget(deps.secrets, targetInput, current);
    await checkAddresses(deps.checkTarget, resolved);
    Object.assign(changes, resolved.columns);
  }
  // The fields given replace the current ones; the bounds hold for the policy that results.
  if (retryPolicy !== undefined) {
    changes.retryPolicy = parseInput(z.strictObject({ retryPolicy: retryPolicySchema }), { retryPolicy: { ...current.retryPolicy, ...retryPolicy } }, 'Request body').retryPolicy;
  }
  // The map given replaces the current one; a masked value sent back keeps its stored value.
  if (headers !== undefined) Object.assign(changes, { headers: {}, headersSealed: sealSentHeaders(deps.secrets, headers, current) });
  // authType repeated unchanged without authConfig keeps the credentials.
  if (authConfig !== undefined || (authType !== undefined && authType !== current.authType)) {
    const effectiveType = authType ?? current.authType;
    changes.authType = effectiveType;
    changes.authConfigSealed = sealAuth(deps, effectiveType, authConfig, current);
  }
  if (patch.slug !== undefined && patch.slug !== current.slug) {
    if (await deps.store.destinations.findOneBy(tenant.org.id, { slug: patch.slug })) throw duplicateSlug(patch.slug);
  }
  let updated: DestinationRow | null;
  try {
    updated = await deps.store.destinations.update(tenant.org.id, id, changes);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateSlug(patch.slug ?? current.slug);
    throw error;
  }
  if (!updated) throw new NotFoundError(`Destination ${id} not found`);
  // Enabled again: the auto-disable clock starts afresh, with a new warning allowed.
  if (patch.enabled === true && !current.enabled) await restartStreak(deps.store.sql, id);
  await deps.announce({ kind: 'destination', action: 'updated', orgId: tenant.org.id, id });
  return destinationView(deps, updated, await destinationStats(deps, updated.id));
}

/** Removes the destination and its routes; its delivery history stays. */
export async function deleteDestination(deps: ApiDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deps.store.destinations.delete(tenant.org.id, id))) throw new NotFoundError(`Destination ${id} not found`);
  await deps.announce({ kind: 'destination', action: 'deleted', orgId: tenant.org.id, id });
}

/** The secret the relay signs deliveries with (Standard Webhooks), for the receiver to verify. */
export async function getSigningSecret(deps: ApiDeps, tenant: Tenant, id: string) {
  const row = await requireDestination(deps, tenant, id);
  return { secret: deps.secrets.open(row.signingSecretSealed) };
}

/**
 * A new signing secret. With `graceSeconds`, deliveries carry the old secret's signature after the new
 * one's until the grace ends (DESIGN 7 "Secret rotation with overlap"); a secret kept from an earlier
 * rotation is dropped at once, so at most two ever sign.
 */
export async function rotateSigningSecret(deps: ApiDeps, tenant: Tenant, id: string, graceSeconds = 0) {
  const current = await requireDestination(deps, tenant, id);
  const secret = generateSigningSecret();
  const now = deps.now();
  const expiresAt = graceSeconds > 0 ? now + graceSeconds * 1000 : null;
  await deps.store.destinations.update(tenant.org.id, id, {
    signingSecretSealed: deps.secrets.seal(secret),
    previousSigningSecretSealed: expiresAt === null ? null : current.signingSecretSealed,
    previousSigningSecretExpiresAt: expiresAt,
    updatedAt: now,
  });
  await deps.announce({ kind: 'destination', action: 'rotated', orgId: tenant.org.id, id });
  if (expiresAt === null) return { secret, message: 'Signing secret rotated. Deliveries from now on are signed with this secret.' };
  const previousSecretExpiresAt = new Date(expiresAt).toISOString();
  return { secret, previousSecretExpiresAt, message: `Signing secret rotated. Deliveries carry signatures of this secret and of the previous one until ${previousSecretExpiresAt}.` };
}
