import { ConflictError } from '../errors/errors.js';
import type { RouteRow } from '../store/entities/route.js';
import type { SqlClient } from '../store/sql-client.js';

/** A source already has the most enabled routes allowed (RELAY_MAX_ROUTES_PER_SOURCE). */
export class RouteLimitReachedError extends ConflictError {
  constructor(sourceId: string, max: number) {
    super(
      'LIMIT_REACHED',
      `Source ${sourceId} already has ${max} enabled routes, the most allowed (RELAY_MAX_ROUTES_PER_SOURCE); disable or delete one first`,
    );
  }
}

/**
 * Runs `enable` (a write that leaves one more route of the source enabled) only if the source has fewer
 * than `max` enabled routes, as one step: the transaction takes SQLite's write lock at BEGIN, and on
 * PostgreSQL locks the source's row before counting, so two concurrent enables of one source are counted
 * one after the other and never pass the bound together.
 */
async function withinRouteLimit(sql: SqlClient, sourceId: string, max: number, enable: (tx: SqlClient) => Promise<void>): Promise<void> {
  await sql.transaction(async (tx) => {
    if (tx.kind === 'postgres') await tx.all('SELECT id FROM sources WHERE id = ? FOR UPDATE', [sourceId]);
    const [row] = await tx.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM routes WHERE source_id = ? AND enabled = ?', [sourceId, tx.bool(true)]);
    if (Number(row?.n ?? 0) >= max) throw new RouteLimitReachedError(sourceId, max);
    await enable(tx);
  });
}

/** Inserts an enabled route unless its source is at the bound (RouteLimitReachedError). */
export function insertEnabledRoute(sql: SqlClient, row: RouteRow, max: number): Promise<void> {
  return withinRouteLimit(sql, row.sourceId, max, async (tx) => {
    await tx.run(
      'INSERT INTO routes (id, org_id, source_id, destination_id, enabled, filter, transformation_id, delay_seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        row.id,
        row.orgId,
        row.sourceId,
        row.destinationId,
        tx.bool(true),
        // As the ORM writes the column: JSON text, `null` for no filter.
        JSON.stringify(row.filter),
        row.transformationId,
        row.delaySeconds,
        row.createdAt,
      ],
    );
  });
}

/** The fields a PATCH may change beside `enabled`; undefined leaves a field as it is. */
export type RoutePatch = Partial<Pick<RouteRow, 'filter' | 'transformationId' | 'delaySeconds'>>;

/** Enables a disabled route (with the rest of its patch) unless its source is at the bound. */
export function enableRoute(sql: SqlClient, route: Pick<RouteRow, 'id' | 'orgId' | 'sourceId'>, patch: RoutePatch, max: number): Promise<void> {
  const changed = Object.entries({ filter: patch.filter === undefined ? undefined : JSON.stringify(patch.filter), transformation_id: patch.transformationId, delay_seconds: patch.delaySeconds }).filter(
    ([, value]) => value !== undefined,
  );
  return withinRouteLimit(sql, route.sourceId, max, async (tx) => {
    const sets = ['enabled = ?', ...changed.map(([column]) => `${column} = ?`)].join(', ');
    await tx.run(`UPDATE routes SET ${sets} WHERE org_id = ? AND id = ?`, [tx.bool(true), ...changed.map(([, value]) => value), route.orgId, route.id]);
  });
}
