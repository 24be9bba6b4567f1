import type { Context } from 'koa';
import { z } from 'zod';
import { ValidationError } from '../../libs/errors/errors.js';
import { parseInput } from '../../libs/http/validate.js';

/** The JSON body without read-only fields, so a fetched resource can be sent back as it came. */
function writableBody(ctx: Context, readOnly: readonly string[]): unknown {
  const body = (ctx.request as { body?: unknown }).body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([key]) => !readOnly.includes(key)));
}

export function parseBody<S extends z.ZodType>(ctx: Context, schema: S, readOnly: readonly string[] = []): z.output<S> {
  return parseInput(schema, writableBody(ctx, readOnly), 'Request body');
}

/** An optional body: absent or empty parses as `{}`. */
export function parseOptionalBody<S extends z.ZodType>(ctx: Context, schema: S): z.output<S> {
  const body = (ctx.request as { body?: unknown }).body;
  const empty = body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0);
  return parseInput(schema, empty ? {} : body, 'Request body');
}

/**
 * The query, by the operation's schema, which lists every parameter it takes: any other is 400
 * VALIDATION_ERROR naming it, so a misspelt or unsupported filter is never silently ignored.
 */
export function parseQuery<S extends z.ZodType>(ctx: Context, schema: S): z.output<S> {
  if (!(schema instanceof z.ZodObject)) throw new TypeError('A query schema is an object of its parameters');
  const unknown = Object.keys(ctx.query).filter((name) => !Object.hasOwn(schema.shape, name));
  if (unknown.length > 0) {
    throw new ValidationError(
      `Query is invalid: unknown parameter ${unknown.join(', ')}`,
      unknown.map((field) => ({ field, message: 'Unknown query parameter' })),
    );
  }
  return parseInput(schema, ctx.query, 'Query');
}
