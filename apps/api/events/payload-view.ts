import { parsePayload, serializePayload, utf8Text } from '../../../libs/payload/payload-document.js';
import { replaceFields } from '../../../libs/payload/replace-fields.js';

/**
 * The payload inside an event view (`includePayload`): a JSON or form body as its value, other text as a
 * string, binary as base64. The source's maskFields show `****`.
 */
export function payloadValue(body: Buffer, contentType: string | null, maskFields: readonly string[]): { payload: unknown; payloadEncoding?: 'base64' } {
  const document = parsePayload(body, contentType);
  if (document) return { payload: replaceFields(document, maskFields).value };
  const text = utf8Text(body);
  return text === null ? { payload: body.toString('base64'), payloadEncoding: 'base64' } : { payload: text };
}

/**
 * The body `/payload` answers with: the bytes as received, unless masked fields had to be replaced (the
 * body is then serialized again). Fields of a body that does not parse cannot be located, nor masked.
 */
export function payloadBytes(body: Buffer, contentType: string | null, maskFields: readonly string[]): Buffer {
  if (maskFields.length === 0) return body;
  const document = parsePayload(body, contentType);
  return document ? serializePayload(replaceFields(document, maskFields)) : body;
}
