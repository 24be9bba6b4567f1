import type { Context, Next } from 'koa';
import { UnauthorizedError } from '../../libs/errors/errors.js';
import { requestOrigin } from '../../libs/http/request-origin.js';
import type { ApiDeps } from './api-deps.js';

const BEARER = /^Bearer\s+(\S{1,512})$/i;

/** Resolves `Authorization: Bearer <key>` to the key, its organization and scope (the caller); anything else is 401. */
export function authenticate(deps: Pick<ApiDeps, 'apiKeys' | 'publicUrl' | 'trustProxy'>) {
  return async function requireApiKey(ctx: Context, next: Next): Promise<void> {
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) throw new UnauthorizedError();
    const principal = await deps.apiKeys.authenticate(match[1]!);
    if (!principal) throw new UnauthorizedError('The API key is not valid');
    ctx.state.tenant = { ...principal, publicUrl: deps.publicUrl ?? requestOrigin(ctx, deps.trustProxy) };
    await next();
  };
}
