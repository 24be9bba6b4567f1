/**
 * A payload as a document that JSONPath can address: a JSON body as its value, a form body as an object of
 * its fields (a repeated name holds an array). Other bodies have no fields to address.
 */
export type PayloadDocument =
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; value: Record<string, string | string[]> };

const JSON_TYPE = /\bjson\b/i;
const FORM_TYPE = /^\s*application\/x-www-form-urlencoded\b/i;

/** The body as text when it is valid UTF-8; null for binary bodies. */
export function utf8Text(body: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
}

function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const current = fields[name];
    if (current === undefined) fields[name] = value;
    else fields[name] = Array.isArray(current) ? [...current, value] : [current, value];
  }
  return fields;
}

/** Null when the content type has no fields or the body does not parse under it (it is then kept raw). */
export function parsePayload(body: Buffer, contentType: string | null): PayloadDocument | null {
  if (!contentType) return null;
  const text = utf8Text(body);
  if (text === null) return null;
  if (JSON_TYPE.test(contentType)) {
    try {
      return { kind: 'json', value: JSON.parse(text) };
    } catch {
      return null;
    }
  }
  if (FORM_TYPE.test(contentType)) return { kind: 'form', value: formFields(text) };
  return null;
}

export function serializePayload(document: PayloadDocument): Buffer {
  if (document.kind === 'json') return Buffer.from(JSON.stringify(document.value));
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(document.value)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  return Buffer.from(params.toString());
}
