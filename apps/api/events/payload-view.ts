import { parsePayload, serializePayload, utf8Text, type PayloadDocument } from '../../../libs/payload/payload-document.js';
import { MASK, replaceFields } from '../../../libs/payload/replace-fields.js';

/**
 * The payload inside an event view (`includePayload`): a JSON or form body as its value, other text as a
 * string, binary as base64. The source's maskFields show `****`. A body too deep or too large to read
 * fields from is shown as its text, or as `****` as a whole when the source masks fields.
 */
export function payloadValue(body: Buffer, contentType: string | null, maskFields: readonly string[]): { payload: unknown; payloadEncoding?: 'base64' } {
  const document = parsePayload(body, contentType);
  if (document?.kind === 'unreadable' && maskFields.length > 0) return { payload: MASK };
  if (document && document.kind !== 'unreadable') return { payload: replaceFields(document, maskFields).value };
  const text = utf8Text(body);
  return text === null ? { payload: body.toString('base64'), payloadEncoding: 'base64' } : { payload: text };
}

/**
 * The body `/payload` answers with: the bytes as received, unless masked fields had to be replaced (the
 * body is then serialized again). Fields of a body that does not parse cannot be located, nor masked; a
 * body too deep or too large to read them from is masked as a whole.
 */
export function payloadBytes(body: Buffer, contentType: string | null, maskFields: readonly string[]): Buffer {
  if (maskFields.length === 0) return body;
  const document = parsePayload(body, contentType);
  if (document === null) return body;
  return serializePayload(document.kind === 'unreadable' ? { kind: document.of, value: MASK } as PayloadDocument : replaceFields(document, maskFields));
}

/** Types a browser shows as data, never as a page (with nosniff): JSON, plain text, form fields, bytes. */
const INERT_TYPES = /^\s*(application\/([\w.+-]+\+)?json|text\/plain|application\/x-www-form-urlencoded|application\/octet-stream)\s*(;|$)/i;

/**
 * False for a type a browser would render (HTML, SVG, XML, anything unknown): `/payload` then answers it
 * as an attachment, so a sender's HTML never runs on the API's origin.
 */
export function isInertPayloadType(contentType: string): boolean {
  return INERT_TYPES.test(contentType);
}
