import type { Context, Next } from 'koa';
import { UnauthorizedError } from '../../libs/errors/errors.js';
import type { ApiDeps } from './api-deps.js';

const BEARER = /^Bearer\s+(\S{1,512})$/i;

/** Resolves `Authorization: Bearer <key>` to the key's organization; anything else is 401. */
export function authenticate(deps: ApiDeps) {
  return async function requireApiKey(ctx: Context, next: Next): Promise<void> {
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) throw new UnauthorizedError();
    const org = await deps.store.organizations.authenticate(match[1]!);
    if (!org) throw new UnauthorizedError('The API key is not valid');
    ctx.state.tenant = { org };
    await next();
  };
}
