import { ConflictError, NotFoundError } from '../../../libs/errors/errors.js';
import { parseInput } from '../../../libs/http/validate.js';
import { newId } from '../../../libs/ids/ids.js';
import { retryPolicySchema } from '../../../libs/delivery/retry-schedule.js';
import { generateSigningSecret } from '../../../libs/secrets/signing-secret.js';
import type { DestinationRow } from '../../../libs/store/entities/destination.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import { isUniqueViolation } from '../../../libs/store/unique-violation.js';
import type { ApiDeps, Tenant } from '../api-deps.js';
import { AUTH_CONFIG_SCHEMAS, type AuthType, type CreateDestinationInput, type PatchDestinationInput } from './destination-schema.js';
import { destinationSummary, destinationView } from './destination-view.js';
import { slugify, uniqueSlug } from '../slugs.js';

/** Validates authConfig against the effective authType and seals it; `none` carries no config. */
function sealAuth(deps: ApiDeps, authType: AuthType, authConfig: Record<string, unknown> | null | undefined): string | null {
  const config = parseInput(AUTH_CONFIG_SCHEMAS[authType].transform((c) => c as Record<string, unknown>), authConfig ?? {}, `authConfig for authType ${authType}`);
  return authType === 'none' ? null : deps.secrets.seal(JSON.stringify(config));
}

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

export async function createDestination(deps: ApiDeps, tenant: Tenant, input: CreateDestinationInput) {
  const now = deps.now();
  const authType = input.authType ?? 'none';
  const slug = input.slug ?? (await uniqueSlug(deps.store.destinations, tenant.org.id, slugify(input.name)));
  if (input.slug && (await deps.store.destinations.findOneBy(tenant.org.id, { slug }))) throw duplicateSlug(slug);
  const row: DestinationRow = {
    id: newId('dst'),
    orgId: tenant.org.id,
    name: input.name,
    slug,
    url: input.url,
    method: input.method ?? 'POST',
    description: input.description ?? null,
    headers: input.headers ?? {},
    authType,
    authConfigSealed: sealAuth(deps, authType, input.authConfig),
    signingSecretSealed: deps.secrets.seal(generateSigningSecret()),
    timeoutMs: input.timeoutMs ?? 30000,
    rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    retryPolicy: input.retryPolicy ?? retryPolicySchema.parse({}),
    enabled: input.enabled ?? true,
    createdAt: now,
    updatedAt: now,
  };
  await insertUnique(deps, row);
  return destinationView(deps, row);
}

export async function getDestination(deps: ApiDeps, tenant: Tenant, id: string) {
  return destinationView(deps, await requireDestination(deps, tenant, id));
}

export async function listDestinations(deps: ApiDeps, tenant: Tenant, query: PageQuery & { enabled?: boolean; search?: string }) {
  const page = await deps.store.destinations.list(tenant.org.id, query, {
    equals: { enabled: query.enabled },
    search: query.search ? { text: query.search, properties: ['name', 'url'] } : undefined,
  });
  return { rows: page.rows.map((row) => destinationSummary(row)), total: page.total };
}

export async function updateDestination(deps: ApiDeps, tenant: Tenant, id: string, patch: PatchDestinationInput) {
  const current = await requireDestination(deps, tenant, id);
  const { authType, authConfig, ...settings } = patch;
  const changes: Partial<DestinationRow> = { ...settings, updatedAt: deps.now() };
  if (authType !== undefined || authConfig !== undefined) {
    const effectiveType = authType ?? current.authType;
    changes.authType = effectiveType;
    changes.authConfigSealed = sealAuth(deps, effectiveType, authConfig);
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
  return destinationView(deps, updated);
}

/** Removes the destination and its routes; its delivery history stays. */
export async function deleteDestination(deps: ApiDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deps.store.destinations.delete(tenant.org.id, id))) throw new NotFoundError(`Destination ${id} not found`);
}

/** The secret the relay signs deliveries with (Standard Webhooks), for the receiver to verify. */
export async function getSigningSecret(deps: ApiDeps, tenant: Tenant, id: string) {
  const row = await requireDestination(deps, tenant, id);
  return { secret: deps.secrets.open(row.signingSecretSealed) };
}

export async function rotateSigningSecret(deps: ApiDeps, tenant: Tenant, id: string) {
  await requireDestination(deps, tenant, id);
  const secret = generateSigningSecret();
  await deps.store.destinations.update(tenant.org.id, id, { signingSecretSealed: deps.secrets.seal(secret), updatedAt: deps.now() });
  return { secret, message: 'Signing secret rotated. Deliveries from now on are signed with this secret.' };
}
