import { createInvalidatingCache } from '../cache/invalidating-cache.js';
import { compileFilter, type CompiledFilter, type FilterDocument } from '../filters/route-filter.js';
import { FieldBudgetExceededError, type FieldBudget } from '../payload/field-budget.js';
import type { SqlClient } from '../store/sql-client.js';
import type { Plan } from '../config/config.js';

export interface RouteTarget {
  destinationId: string;
  destinationName: string;
}

/** A target a job is published for: `ordering: "source"` keeps every job in the destination's own topic, out of the lanes (`withLane`). */
export interface JobTarget extends RouteTarget {
  destinationOrdered: boolean;
}

/** A destination an event of the source goes to, by which route, if that route's filter matches it. */
export interface RoutedTarget extends JobTarget {
  routeId: string;
  /** null: the route has no filter and takes every event. */
  filter: CompiledFilter | null;
  /** The route's transformation (libs/transformations), its env still sealed; null for none. */
  transformation: RouteTransformation | null;
  /** Deliveries are not attempted before the event's receipt plus this. */
  delaySeconds: number;
}

export interface RouteTransformation {
  id: string;
  code: string;
  sealedEnv: string;
  /** The organization's plan: the result is at most its payload limit. */
  plan: Plan;
}

/**
 * Which routed destinations an event goes to, and the routes whose filters turned it away. A filter that
 * cannot be decided within the event's budget does not take it: a destination gets only what its filter
 * was seen to take (docs/decisions/0054-field-work-budget.md); routes without a filter take it still.
 */
export function matchRoutes(targets: RoutedTarget[], document: () => FilterDocument, budget: FieldBudget): { targets: RoutedTarget[]; filteredRouteIds: string[] } {
  if (targets.every((target) => target.filter === null)) return { targets, filteredRouteIds: [] };
  const built = document();
  const matched: RoutedTarget[] = [];
  const filteredRouteIds: string[] = [];
  for (const target of targets) {
    if (target.filter === null || filterTakes(target.filter, built, budget)) matched.push(target);
    else filteredRouteIds.push(target.routeId);
  }
  return { targets: matched, filteredRouteIds };
}

/** Whether the filter takes the document: false when deciding it runs past the budget. */
export function filterTakes(filter: CompiledFilter, document: FilterDocument, budget: FieldBudget): boolean {
  try {
    return filter(document, budget);
  } catch (error) {
    if (error instanceof FieldBudgetExceededError) return false;
    throw error;
  }
}

/**
 * The destinations an event of a source goes to: enabled routes to existing destinations, with their
 * filters compiled. Cached per source; any route, destination or source change clears the cache
 * (`invalidate`).
 */
export function createRouteTargets(sql: SqlClient, options: { ttlMs?: number; now?: () => number } = {}) {
  const cache = createInvalidatingCache({ load: (sourceId: string) => loadRouteTargets(sql, sourceId), ttlMs: options.ttlMs ?? 30_000, now: options.now });
  return {
    forSource: (sourceId: string): Promise<RoutedTarget[]> => cache.get(sourceId),
    invalidate: (): void => cache.invalidate(),
  };
}

async function loadRouteTargets(sql: SqlClient, sourceId: string): Promise<RoutedTarget[]> {
  const rows = await sql.all<RouteTarget & { routeId: string; filter: string | null; ordering: string; delaySeconds: number | string; transformationId: string | null; code: string | null; sealedEnv: string | null; plan: Plan }>(
    `SELECT d.id AS "destinationId", d.name AS "destinationName", r.id AS "routeId", r.filter, d.ordering, r.delay_seconds AS "delaySeconds",
       t.id AS "transformationId", t.code, t.env AS "sealedEnv", o.plan
     FROM routes r
     JOIN destinations d ON d.id = r.destination_id
     JOIN organizations o ON o.id = r.org_id
     LEFT JOIN transformations t ON t.id = r.transformation_id
     WHERE r.source_id = ? AND r.enabled = ? ORDER BY r.created_at, r.id`,
    [sourceId, sql.bool(true)],
  );
  return rows.map(({ filter, ordering, delaySeconds, transformationId, code, sealedEnv, plan, ...row }) => {
    // The ORM writes an absent filter as JSON `null`.
    const stored: unknown = filter === null ? null : JSON.parse(filter);
    return {
      ...row,
      filter: stored === null ? null : compileFilter(stored),
      destinationOrdered: ordering === 'source',
      transformation: transformationId === null ? null : { id: transformationId, code: code!, sealedEnv: sealedEnv!, plan },
      delaySeconds: Number(delaySeconds),
    };
  });
}

export type RouteTargets = ReturnType<typeof createRouteTargets>;
