import { z } from 'zod';
import type { JobTarget } from '../routing/route-targets.js';
import { decodeRows } from '../store/row-schema.js';
import type { SqlClient } from '../store/sql-client.js';

/**
 * The statements on `destinations` that the pipeline and the bulk paths run over the driver; the API's
 * CRUD goes through `store.destinations` (libs/store). A destination is disabled by the system (`410
 * Gone`) only here.
 */

const targetRowSchema = z.object({ destinationId: z.string(), destinationName: z.string(), ordering: z.string() });

/** The organization's destinations among `ids` as job targets, in no particular order; others' ids are left out. */
export async function destinationTargets(sql: SqlClient, orgId: string, ids: readonly string[]): Promise<JobTarget[]> {
  if (ids.length === 0) return [];
  const rows = await sql.all(
    `SELECT id AS "destinationId", name AS "destinationName", ordering FROM destinations WHERE org_id = ? AND id IN (${ids.map(() => '?').join(', ')})`,
    [orgId, ...ids],
  );
  return decodeRows(targetRowSchema, 'destinations', rows).map(({ ordering, ...row }) => ({ ...row, destinationOrdered: ordering === 'source' }));
}

/** Every destination that keeps its sources' order (`ordering: "source"`), across organizations. */
export async function orderedDestinationIds(sql: SqlClient): Promise<string[]> {
  const rows = await sql.all("SELECT id FROM destinations WHERE ordering = 'source'");
  return decodeRows(z.object({ id: z.string() }), 'destinations', rows).map((row) => row.id);
}

/**
 * Whether the destination keeps its sources' order now; on PostgreSQL read under a share lock, so a
 * switch to `none` waits for the transaction `tx` to end.
 */
export async function orderedUnderShareLock(tx: SqlClient, destinationId: string): Promise<boolean> {
  const rows = await tx.all(`SELECT ordering FROM destinations WHERE id = ?${tx.kind === 'postgres' ? ' FOR SHARE' : ''}`, [destinationId]);
  return decodeRows(z.object({ ordering: z.string() }), 'destinations', rows)[0]?.ordering === 'source';
}

/** Disables an enabled destination as a PATCH would, with reason `gone`; false when it was disabled already. */
export async function disableGoneDestination(sql: SqlClient, orgId: string, destinationId: string, at: number): Promise<boolean> {
  const changed = await sql.run(
    `UPDATE destinations SET enabled = ?, disabled_reason = 'gone', disabled_at = ?, updated_at = ? WHERE id = ? AND org_id = ? AND enabled = ?`,
    [sql.bool(false), at, at, destinationId, orgId, sql.bool(true)],
  );
  return changed > 0;
}
