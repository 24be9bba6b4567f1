import { ConflictError, NotFoundError, ValidationError } from '../../../libs/errors/errors.js';
import { newId } from '../../../libs/ids/ids.js';
import type { RouteRow } from '../../../libs/store/entities/route.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import { isUniqueViolation } from '../../../libs/store/unique-violation.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import type { RouteFilter } from './route-filter-schema.js';
import { enableRoute, insertEnabledRoute } from '../../../libs/routing/route-limit.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import { getTransformation } from '../../../libs/transformations/transformations.js';

export interface CreateRouteInput {
  sourceId: string;
  destinationId: string;
  enabled?: boolean;
  filter?: RouteFilter;
  transformationId?: string | null;
  delaySeconds?: number;
}

function routeView(row: RouteRow) {
  return {
    id: row.id,
    sourceId: row.sourceId,
    destinationId: row.destinationId,
    enabled: row.enabled,
    filter: row.filter,
    transformationId: row.transformationId,
    delaySeconds: row.delaySeconds,
    createdAt: isoTime(row.createdAt),
  };
}

async function requireRoute(deps: ApiDeps, tenant: Tenant, id: string): Promise<RouteRow> {
  const row = await deps.store.routes.get(tenant.org.id, id);
  if (!row) throw new NotFoundError(`Route ${id} not found`);
  return row;
}

/** A route's transformation must be one of its organization's. */
async function requireRouteTransformation(sql: SqlClient, orgId: string, id: string | null | undefined): Promise<void> {
  if (id && !(await getTransformation(sql, orgId, id))) throw new NotFoundError(`Transformation ${id} not found`);
}

const duplicateRoute = () => new ConflictError('DUPLICATE_ROUTE', 'A route between this source and destination already exists');

export async function createRoute(deps: ApiDeps, tenant: Tenant, input: CreateRouteInput) {
  const orgId = tenant.org.id;
  // Ids of another organization are as unknown as ids that do not exist.
  if (!(await deps.store.sources.get(orgId, input.sourceId))) throw new NotFoundError(`Source ${input.sourceId} not found`);
  if (!(await deps.store.destinations.get(orgId, input.destinationId))) {
    throw new NotFoundError(`Destination ${input.destinationId} not found`);
  }
  await requireRouteTransformation(deps.store.sql, orgId, input.transformationId);
  if (await deps.store.routes.findOneBy(orgId, { sourceId: input.sourceId, destinationId: input.destinationId })) throw duplicateRoute();
  const row: RouteRow = {
    id: newId('rte'),
    orgId,
    sourceId: input.sourceId,
    destinationId: input.destinationId,
    enabled: input.enabled ?? true,
    filter: input.filter ?? null,
    transformationId: input.transformationId ?? null,
    delaySeconds: input.delaySeconds ?? 0,
    createdAt: deps.now(),
  };
  try {
    // An enabled route counts against its source's bound (409 LIMIT_REACHED); a disabled one does not.
    if (row.enabled) await insertEnabledRoute(deps.store.sql, row, deps.maxRoutesPerSource);
    else await deps.store.routes.insert(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateRoute();
    throw error;
  }
  await deps.announce({ kind: 'route', action: 'created', orgId, id: row.id });
  return routeView(row);
}

export async function getRoute(deps: ApiDeps, tenant: Tenant, id: string) {
  return routeView(await requireRoute(deps, tenant, id));
}

export async function listRoutes(deps: ApiDeps, tenant: Tenant, query: PageQuery & { sourceId?: string; destinationId?: string }) {
  const page = await deps.store.routes.list(tenant.org.id, query, {
    equals: { sourceId: query.sourceId, destinationId: query.destinationId },
  });
  return { rows: page.rows.map(routeView), total: page.total };
}

export interface PatchRouteInput {
  sourceId?: string;
  destinationId?: string;
  enabled?: boolean;
  filter?: RouteFilter;
  transformationId?: string | null;
  delaySeconds?: number;
}

export async function updateRoute(deps: ApiDeps, tenant: Tenant, id: string, { sourceId, destinationId, enabled, filter, transformationId, delaySeconds }: PatchRouteInput) {
  const current = await requireRoute(deps, tenant, id);
  const moved = [
    ...(sourceId !== undefined && sourceId !== current.sourceId ? ['sourceId'] : []),
    ...(destinationId !== undefined && destinationId !== current.destinationId ? ['destinationId'] : []),
  ];
  if (moved.length) {
    throw new ValidationError(
      "A route's source and destination cannot be changed: delete it and create another",
      moved.map((field) => ({ field, message: 'is immutable after creation' })),
    );
  }
  if (enabled === undefined && filter === undefined && transformationId === undefined && delaySeconds === undefined) return routeView(current);
  await requireRouteTransformation(deps.store.sql, tenant.org.id, transformationId);
  if (enabled && !current.enabled) await enableRoute(deps.store.sql, current, { filter, transformationId, delaySeconds }, deps.maxRoutesPerSource);
  else await deps.store.routes.update(tenant.org.id, id, { enabled, filter, transformationId, delaySeconds });
  const updated = await deps.store.routes.get(tenant.org.id, id);
  if (!updated) throw new NotFoundError(`Route ${id} not found`);
  await deps.announce({ kind: 'route', action: 'updated', orgId: tenant.org.id, id });
  return routeView(updated);
}

export async function deleteRoute(deps: ApiDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deps.store.routes.delete(tenant.org.id, id))) throw new NotFoundError(`Route ${id} not found`);
  await deps.announce({ kind: 'route', action: 'deleted', orgId: tenant.org.id, id });
}
