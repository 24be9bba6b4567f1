import { maskSecret } from '../../../libs/secrets/mask-secret.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import { signatureHeaderOf } from '../../../libs/signatures/signature-header.js';

/** Received headers that carry credentials (DESIGN section 6); names lower-cased. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key'];

type StoredHeaders = Record<string, string | string[]>;

/**
 * Stored headers as every API view shows them: credentials and the source's own signature header as
 * `****` and their last 4 characters (only `****` for short values, as for secrets). The store keeps
 * the raw values: verification and delivery use them; no view shows them again.
 */
export function storedHeadersView(headersJson: string, signatureHeader: string | null): StoredHeaders {
  const headers = JSON.parse(headersJson) as StoredHeaders;
  const hidden = signatureHeader === null ? CREDENTIAL_HEADERS : [...CREDENTIAL_HEADERS, signatureHeader];
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) =>
      hidden.includes(name.toLowerCase()) ? [name, Array.isArray(value) ? value.map(maskSecret) : maskSecret(value)] : [name, value],
    ),
  );
}

/** The signature header of each of these sources as configured now (null where it verifies nothing). */
export async function signatureHeadersOf(sql: SqlClient, sourceIds: readonly string[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(sourceIds)];
  if (ids.length === 0) return new Map();
  const rows = await sql.all<{ id: string; verification: string }>(
    `SELECT id, verification FROM sources WHERE id IN (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  return new Map(rows.map((row) => [row.id, signatureHeaderOf(JSON.parse(row.verification) as Record<string, unknown>)]));
}
