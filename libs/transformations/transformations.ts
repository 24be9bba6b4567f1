import { ConflictError } from '../errors/errors.js';
import type { PageQuery } from '../store/org-scoped-repository.js';
import type { SqlClient } from '../store/sql-client.js';

/** A transformation as stored: `env` is the sealed JSON of its values (every one a secret). */
export interface TransformationRow {
  id: string;
  orgId: string;
  name: string;
  code: string;
  sealedEnv: string;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = `id, org_id AS "orgId", name, code, env AS "sealedEnv", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** PostgreSQL answers BIGINT columns as text. */
function rowOf(row: TransformationRow): TransformationRow {
  return { ...row, createdAt: Number(row.createdAt), updatedAt: Number(row.updatedAt) };
}

export const transformationNameTaken = () => new ConflictError('DUPLICATE_NAME', 'A transformation with this name already exists');

export async function insertTransformation(sql: SqlClient, row: TransformationRow): Promise<void> {
  await sql.run(`INSERT INTO transformations (id, org_id, name, code, env, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
    row.id,
    row.orgId,
    row.name,
    row.code,
    row.sealedEnv,
    row.createdAt,
    row.updatedAt,
  ]);
}

export async function getTransformation(sql: SqlClient, orgId: string, id: string): Promise<TransformationRow | null> {
  const [row] = await sql.all<TransformationRow>(`SELECT ${COLUMNS} FROM transformations WHERE org_id = ? AND id = ?`, [orgId, id]);
  return row ? rowOf(row) : null;
}

export async function findTransformationByName(sql: SqlClient, orgId: string, name: string): Promise<TransformationRow | null> {
  const [row] = await sql.all<TransformationRow>(`SELECT ${COLUMNS} FROM transformations WHERE org_id = ? AND name = ?`, [orgId, name]);
  return row ? rowOf(row) : null;
}

/** Newest first, as every list of the API. */
export async function listTransformations(sql: SqlClient, orgId: string, page: PageQuery): Promise<{ rows: TransformationRow[]; total: number }> {
  const rows = await sql.all<TransformationRow>(`SELECT ${COLUMNS} FROM transformations WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, [
    orgId,
    page.pageSize,
    (page.page - 1) * page.pageSize,
  ]);
  const [count] = await sql.all<{ total: number | string }>('SELECT COUNT(*) AS total FROM transformations WHERE org_id = ?', [orgId]);
  return { rows: rows.map(rowOf), total: Number(count?.total ?? 0) };
}

export async function updateTransformation(sql: SqlClient, row: TransformationRow): Promise<void> {
  await sql.run('UPDATE transformations SET name = ?, code = ?, env = ?, updated_at = ? WHERE org_id = ? AND id = ?', [row.name, row.code, row.sealedEnv, row.updatedAt, row.orgId, row.id]);
}

/** Deletes it unless a route uses it (`409 IN_USE`); false when there was none. */
export async function deleteTransformation(sql: SqlClient, orgId: string, id: string): Promise<boolean> {
  return sql.transaction(async (tx) => {
    const [used] = await tx.all<{ id: string }>('SELECT id FROM routes WHERE org_id = ? AND transformation_id = ? LIMIT 1', [orgId, id]);
    if (used) throw new ConflictError('IN_USE', `Transformation ${id} is used by route ${used.id}`);
    return (await tx.run('DELETE FROM transformations WHERE org_id = ? AND id = ?', [orgId, id])) > 0;
  });
}
