import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { RelayError, ValidationError } from '../errors/errors.js';
import { exceedsDepth, MAX_FIELD_DEPTH } from '../payload/payload-document.js';
import { nulCharacterFields } from './nul-characters.js';

/** The same bound as for reading fields from ingested bodies. */
const MAX_BODY_DEPTH = MAX_FIELD_DEPTH;

export interface JsonBodyOptions {
  limit?: string;
}

function hasBody(ctx: Context): boolean {
  const length = ctx.request.headers['content-length'];
  return ctx.request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** JSON request bodies only: a body of any other type is 415, malformed JSON is 400 INVALID_JSON. */
export function jsonBody(options: JsonBodyOptions = {}) {
  const parse = koaBody({
    json: true,
    // Any JSON value parses; a body that is valid JSON but not an object is the validator's VALIDATION_ERROR.
    jsonStrict: false,
    jsonLimit: options.limit ?? '1mb',
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async function readJson(ctx: Context, next: Next): Promise<void> {
    if (hasBody(ctx) && !ctx.request.is('application/json', 'application/*+json')) {
      throw new RelayError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json');
    }
    await parse(ctx, async () => {
      // Non-strict parsing hands back '' for an empty body (strict mode gave {}): no body stays an empty object.
      if (ctx.request.body === '' && !hasBody(ctx)) ctx.request.body = {};
      // Validation, views and serialization recurse over what they are given: a body nested thousands
      // deep would overflow the stack in any of them.
      if (exceedsDepth(ctx.request.body, MAX_BODY_DEPTH)) {
        throw new ValidationError(`Request body is nested deeper than ${MAX_BODY_DEPTH} levels`, [{ field: '(body)', message: `must nest at most ${MAX_BODY_DEPTH} levels deep` }]);
      }
      const nul = nulCharacterFields(ctx.request.body);
      if (nul.length > 0) throw new ValidationError(`Request body is invalid: ${nul.map((d) => `${d.field}: ${d.message}`).join('; ')}`, nul);
      await next();
    });
  };
}
