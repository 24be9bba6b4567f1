import Router from '@koa/router';
import type { ApiDeps } from '../api-deps.js';
import { parseOptionalBody, tenantOf } from '../request-input.js';
import { getDestinationHealth } from './destination-health.js';
import { destinationTestBody, testDestination } from './destination-test.js';

/** `GET /destinations/{id}/health` and `POST /destinations/{id}/test`. */
export function destinationHealthRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/destinations' });
  router.get('/:id/health', async (ctx) => {
    ctx.body = await getDestinationHealth(deps, tenantOf(ctx), ctx.params.id);
  });
  router.post('/:id/test', async (ctx) => {
    const body = parseOptionalBody(ctx, destinationTestBody);
    ctx.body = await testDestination(deps, tenantOf(ctx), ctx.params.id, body.payload);
  });
  return router;
}
