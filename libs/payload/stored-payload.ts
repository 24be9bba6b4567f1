import type { SecretBox } from '../secrets/secret-box.js';
import { parsePayload, serializePayload, utf8Text } from './payload-document.js';
import { FieldBudget } from './field-budget.js';
import { replaceSelectedFields } from './replace-fields.js';

/** A source's field settings (SPEC 2.2): JSONPath expressions of fields to encrypt at rest, and to mask. */
export interface PayloadPolicy {
  encryptFields: readonly string[];
  maskFields: readonly string[];
}

/** An event's payload as the store keeps it. */
export interface StoredPayload {
  bytes: Buffer;
  /** The bytes are the sealed body (see `storedPayload`), to be opened with the secret box. */
  sealed: boolean;
  /** What payload search looks in; null when nothing of the body may be searched. */
  searchText: string | null;
}

/**
 * What is stored for a received body. When the source names fields to encrypt, the whole body is sealed
 * (AES-256-GCM): the stored payload holds no plaintext of those fields, and opening it gives back the
 * exact bytes received, so a replay is byte-exact (provider signatures over the body stay valid) and no
 * number loses precision in a parse and re-serialize. Encrypted and masked fields are left out of the
 * search text (replaced by `****`); a body whose fields cannot be located (it does not parse, is too
 * deep or too large to read, or locating them runs past the event's `budget`) is not searchable at all.
 */
export function storedPayload(body: Buffer, contentType: string | null, policy: PayloadPolicy, secrets: SecretBox, budget = new FieldBudget()): StoredPayload {
  const hidden = [...policy.encryptFields, ...policy.maskFields];
  if (policy.encryptFields.length > 0) return { ...sealedPayload(body, secrets), searchText: searchText(body, contentType, hidden, budget) };
  return { bytes: body, sealed: false, searchText: searchText(body, contentType, hidden, budget) };
}

/**
 * What is stored for a body the gateway sealed already (a source with `encryptFields`): the sealed bytes as
 * they are, searchable by what the policy leaves visible. A body that does not open throws DecryptionError.
 */
export function storedSealedPayload(sealed: Buffer, contentType: string | null, policy: PayloadPolicy, secrets: SecretBox, budget = new FieldBudget()): StoredPayload {
  const body = openStoredPayload(sealed, true, secrets);
  return { bytes: sealed, sealed: true, searchText: searchText(body, contentType, [...policy.encryptFields, ...policy.maskFields], budget) };
}

/** The whole body sealed and nothing of it searchable: what is kept of a body whose fields could not be handled. */
export function sealedPayload(body: Buffer, secrets: SecretBox): StoredPayload {
  return { bytes: Buffer.from(secrets.seal(body.toString('base64'))), sealed: true, searchText: null };
}

/** The body as received, from what `storedPayload` stored. */
export function openStoredPayload(bytes: Buffer, sealed: boolean, secrets: SecretBox): Buffer {
  return sealed ? Buffer.from(secrets.open(bytes.toString('utf8')), 'base64') : bytes;
}

/** Search covers the start of a body: indexing megabytes of text per event would slow every insert. */
export const SEARCH_TEXT_LIMIT = 64 * 1024;

function searchText(body: Buffer, contentType: string | null, hiddenPaths: string[], budget: FieldBudget): string | null {
  let text: string | null;
  if (hiddenPaths.length === 0) text = utf8Text(body);
  else {
    const document = parsePayload(body, contentType);
    const visible = document === null || document.kind === 'unreadable' ? null : replaceSelectedFields(document, hiddenPaths, budget);
    text = visible === null ? null : serializePayload(visible).toString('utf8');
  }
  // PostgreSQL text cannot hold NUL.
  if (text === null || text.includes('\u0000')) return null;
  if (text.length <= SEARCH_TEXT_LIMIT) return text;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[SEARCH_TEXT_LIMIT - 1]!) ? SEARCH_TEXT_LIMIT - 1 : SEARCH_TEXT_LIMIT;
  return text.slice(0, end);
}
