import { ValidationError } from '../errors/errors.js';
import { maskSecret } from '../secrets/mask-secret.js';
import { isMaskedValue } from '../secrets/masked-value.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { SqlClient } from '../store/sql-client.js';
import type { DestinationRow } from '../store/entities/destination.js';
import { REDACTED } from '../transfer/transfer-kind.js';

type Headers = Record<string, string>;

/**
 * A destination's `headers` values are secrets (DESIGN section 7, Hardening): a header often carries a
 * credential. They are sealed as one JSON map in `headers_sealed`; `headers` is the plain column of rows
 * written before, read until `sealPlainHeaders` has sealed them.
 */
export function openHeaders(secrets: SecretBox, row: Pick<DestinationRow, 'headers' | 'headersSealed'>): Headers {
  return row.headersSealed === null ? row.headers : (JSON.parse(secrets.open(row.headersSealed)) as Headers);
}

/** The sealed form of a map; null for none. */
export function sealHeaders(secrets: SecretBox, headers: Headers): string | null {
  return Object.keys(headers).length === 0 ? null : secrets.seal(JSON.stringify(headers));
}

/** Every value as views show secrets: `****` and its last 4 characters. */
export function maskedHeaders(secrets: SecretBox, row: DestinationRow): Headers {
  return Object.fromEntries(Object.entries(openHeaders(secrets, row)).map(([name, value]) => [name, maskSecret(value)]));
}

/** Every value `***REDACTED***`, as exports without includeSensitive show secrets; the names stay. */
export function redactedHeaders(secrets: SecretBox, row: DestinationRow): Headers {
  return Object.fromEntries(Object.keys(openHeaders(secrets, row)).map((name) => [name, REDACTED]));
}

/** A value a client was shown instead of the secret: it stands for the stored value, never for a new one. */
const standsForStored = (value: string) => isMaskedValue(value) || value === REDACTED;

export interface ResolvedHeaders {
  headers: Headers;
  /** Names sent with a masked or redacted value that has no stored value of that name to stand for; left out of `headers`. */
  unknown: string[];
}

/** Puts the stored value back wherever a fetched destination or an export sent its masked or redacted form. */
export function resolveHeaders(secrets: SecretBox, headers: Headers, current?: DestinationRow): ResolvedHeaders {
  const stored = current ? openHeaders(secrets, current) : {};
  const resolved: Headers = {};
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!standsForStored(value)) resolved[name] = value;
    else if (Object.hasOwn(stored, name)) resolved[name] = stored[name]!;
    else unknown.push(name);
  }
  return { headers: resolved, unknown };
}

/** The sealed map to store for headers sent on create, PATCH or import; a mask that stands for nothing stored is a 400. */
export function sealSentHeaders(secrets: SecretBox, headers: Headers, current?: DestinationRow): string | null {
  const resolved = resolveHeaders(secrets, headers, current);
  if (resolved.unknown.length > 0) {
    const details = resolved.unknown.map((name) => ({ field: `headers.${name}`, message: 'is a masked or redacted value with no stored value to keep; send the real value' }));
    throw new ValidationError(`headers is invalid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
  }
  return sealHeaders(secrets, resolved.headers);
}

/**
 * Seals the headers of rows written before they were secrets, once per row: the condition is in the
 * statement, so processes starting together seal each row once between them. Answers how many it sealed.
 */
export async function sealPlainHeaders(sql: SqlClient, secrets: SecretBox): Promise<number> {
  const rows = await sql.all<{ id: string; headers: string }>("SELECT id, headers FROM destinations WHERE headers_sealed IS NULL AND headers <> '{}'");
  let sealed = 0;
  for (const row of rows) {
    const headers = JSON.parse(row.headers) as Headers;
    sealed += await sql.run("UPDATE destinations SET headers_sealed = ?, headers = '{}' WHERE id = ? AND headers_sealed IS NULL", [sealHeaders(secrets, headers), row.id]);
  }
  return sealed;
}
