import { z } from 'zod';
import { signatureHeaderOf } from '../signatures/signature-header.js';
import { decodeRows } from '../store/row-schema.js';
import type { SqlClient } from '../store/sql-client.js';

/**
 * Reads of `sources` for many ids at once, over the driver (event pages, bulk replays); the API's CRUD
 * goes through `store.sources` (libs/store).
 */

const inList = (ids: readonly string[]) => ids.map(() => '?').join(', ');

/** The slug of each of the organization's sources among `ids`. */
export async function sourceSlugs(sql: SqlClient, orgId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await sql.all(`SELECT id, slug FROM sources WHERE org_id = ? AND id IN (${inList(unique)})`, [orgId, ...unique]);
  return new Map(decodeRows(z.object({ id: z.string(), slug: z.string() }), 'sources', rows).map((row) => [row.id, row.slug]));
}

/** The signature header of each of these sources as configured now (null where it verifies nothing). */
export async function signatureHeadersOf(sql: SqlClient, sourceIds: readonly string[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(sourceIds)];
  if (ids.length === 0) return new Map();
  const rows = await sql.all(`SELECT id, verification FROM sources WHERE id IN (${inList(ids)})`, ids);
  return new Map(
    decodeRows(z.object({ id: z.string(), verification: z.string() }), 'sources', rows).map((row) => [
      row.id,
      signatureHeaderOf(JSON.parse(row.verification) as Record<string, unknown>),
    ]),
  );
}
