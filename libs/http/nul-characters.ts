import type { Context, Next } from 'koa';
import { RelayError, ValidationError, type FieldIssue } from '../errors/errors.js';

/*
 * NUL (U+0000) is refused in every request input that can reach the store: PostgreSQL text cannot hold
 * it (the query fails), and both stores must answer the same request alike. No id, slug, name or query
 * value of the API has a use for it. Ingest bodies are bytes and keep any.
 */

const ENCODED_NUL = /%00/;

/** A path or query with `%00` is refused before any route reads it. */
export async function refuseEncodedNul(ctx: Context, next: Next): Promise<void> {
  if (ENCODED_NUL.test(ctx.path)) throw new RelayError(400, 'INVALID_PATH', 'The request path may not contain NUL characters (%00)');
  if (ENCODED_NUL.test(ctx.querystring)) {
    throw new ValidationError('Query values may not contain NUL characters (%00)', [{ field: '(query)', message: 'contains %00' }]);
  }
  await next();
}

/**
 * Where a parsed JSON value holds NUL, in a string or a key: at most a few places, named as validation
 * details name fields. Walked with a list, not recursion: a body may nest thousands of levels deep.
 */
export function nulCharacterFields(body: unknown): FieldIssue[] {
  const found: FieldIssue[] = [];
  const pending: [unknown, string][] = [[body, '']];
  while (pending.length > 0 && found.length < 5) {
    const [value, field] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) found.push({ field: field || '(body)', message: 'may not contain NUL characters (\\u0000)' });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push([item, `${field}[${index}]`]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const path = field === '' ? key : `${field}.${key}`;
        if (key.includes('\u0000')) found.push({ field: path, message: 'field names may not contain NUL characters (\\u0000)' });
        pending.push([item, path]);
      }
    }
  }
  return found;
}
