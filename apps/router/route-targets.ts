import type { SqlClient } from '../../libs/store/sql-client.js';

export interface RouteTarget {
  destinationId: string;
  destinationName: string;
}

/**
 * The destinations an event of a source goes to: enabled routes to existing destinations. Cached per
 * source; any route, destination or source change clears the cache (`invalidate`).
 */
export function createRouteTargets(sql: SqlClient, options: { ttlMs?: number; now?: () => number } = {}) {
  const ttlMs = options.ttlMs ?? 30_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { targets: RouteTarget[]; expiresAt: number }>();
  let generation = 0;
  return {
    async forSource(sourceId: string): Promise<RouteTarget[]> {
      const hit = cache.get(sourceId);
      if (hit && hit.expiresAt > now()) return hit.targets;
      const startedAt = generation;
      const targets = await sql.all<RouteTarget>(
        `SELECT d.id AS "destinationId", d.name AS "destinationName" FROM routes r
         JOIN destinations d ON d.id = r.destination_id
         WHERE r.source_id = ? AND r.enabled = ? ORDER BY r.created_at, r.id`,
        [sourceId, sql.bool(true)],
      );
      if (startedAt === generation) cache.set(sourceId, { targets, expiresAt: now() + ttlMs });
      return targets;
    },
    invalidate(): void {
      generation += 1;
      cache.clear();
    },
  };
}

export type RouteTargets = ReturnType<typeof createRouteTargets>;
