import { maskSecret } from '../../../libs/secrets/mask-secret.js';

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
