/**
 * A payload as a document that JSONPath can address: a JSON body as its value, a form body as an object of
 * its fields (a repeated name holds an array). Other bodies have no fields to address.
 */
export type PayloadDocument =
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; value: Record<string, string | string[]> };

/**
 * A body whose type has fields but which is too deep or too large to read them from safely. It is still
 * stored and delivered byte-exact; whatever needs its fields (masking, search) treats it as a whole.
 */
export interface UnreadablePayload {
  kind: 'unreadable';
  /** The kind of document it would have been. */
  of: PayloadDocument['kind'];
  reason: string;
}

/** Nesting beyond this is not read for fields (recursive code over it could overflow the stack). */
export const MAX_FIELD_DEPTH = 64;
/** Bodies beyond this are not parsed for fields: a routing step must not spend seconds on one body. */
export const MAX_FIELD_BYTES = 5 * 1024 * 1024;

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

/** True when `value` nests objects or arrays deeper than `maxDepth`; iterative, so any depth is safe to check. */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * URL-encoded parameters as an object; a repeated name holds an array. Without a prototype: a field named
 * `constructor` or `__proto__` is a field like any other.
 */
export function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    const current = fields[name];
    if (current === undefined) fields[name] = value;
    else fields[name] = Array.isArray(current) ? [...current, value] : [current, value];
  }
  return fields;
}

/**
 * The body's fields. Null when the content type has no fields or the body does not parse under it (it is
 * then kept raw); `unreadable` when it is too large or too deep to read them from.
 */
export function parsePayload(body: Buffer, contentType: string | null): PayloadDocument | UnreadablePayload | null {
  if (!contentType) return null;
  const json = JSON_TYPE.test(contentType);
  if (!json && !FORM_TYPE.test(contentType)) return null;
  if (body.length > MAX_FIELD_BYTES) return { kind: 'unreadable', of: json ? 'json' : 'form', reason: `larger than ${MAX_FIELD_BYTES} bytes` };
  const text = utf8Text(body);
  if (text === null) return null;
  if (!json) return { kind: 'form', value: formFields(text) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return exceedsDepth(value, MAX_FIELD_DEPTH) ? { kind: 'unreadable', of: 'json', reason: `nested deeper than ${MAX_FIELD_DEPTH} levels` } : { kind: 'json', value };
}

export function serializePayload(document: PayloadDocument): Buffer {
  if (document.kind === 'json') return Buffer.from(JSON.stringify(document.value));
  // A form masked as a whole (replaceFields) is the mask itself.
  if (typeof document.value === 'string') return Buffer.from(document.value);
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(document.value)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  return Buffer.from(params.toString());
}
