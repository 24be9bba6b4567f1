import type { Context, Next } from 'koa';
import type { ResourceChange } from '../../libs/pipeline/config-change.js';
import type { ApiDeps } from './api-deps.js';

const KINDS: Record<string, ResourceChange['kind']> = { sources: 'source', destinations: 'destination', routes: 'route', keys: 'key' };
const ACTIONS: Record<string, ResourceChange['action']> = { POST: 'created', PATCH: 'updated', PUT: 'updated', DELETE: 'deleted' };

/**
 * After every successful write, tells running processes (gateway caches, deliverer subscriptions) that
 * configuration changed, so a rotated secret or a disabled source takes effect on the next request.
 */
export function announceChanges(deps: ApiDeps) {
  return async function announce(ctx: Context, next: Next): Promise<void> {
    await next();
    const action = ACTIONS[ctx.method];
    const kind = KINDS[ctx.path.split('/')[2] ?? ''];
    if (!action || !kind || ctx.status >= 400) return;
    const tenant = ctx.state.tenant as { org: { id: string } };
    const id = (ctx.params as { id?: string } | undefined)?.id ?? (ctx.body as { id?: string } | undefined)?.id ?? '*';
    await deps.announce({ kind, action: ctx.path.endsWith('/rotate-secret') ? 'updated' : action, orgId: tenant.org.id, id });
  };
}
