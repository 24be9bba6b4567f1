import Router from '@koa/router';
import Koa from 'koa';
import { MethodNotAllowedError, NotFoundError } from '../../libs/errors/errors.js';
import { errorMiddleware } from '../../libs/http/error-middleware.js';
import { jsonBody } from '../../libs/http/json-body.js';
import type { ApiDeps } from './api-deps.js';
import { authenticate } from './authenticate.js';
import { destinationRoutes } from './destinations/destination-routes.js';
import { routeRoutes } from './routes/route-routes.js';
import { sourceRoutes } from './sources/source-routes.js';

/** The management API: `/api/*` behind API keys, plus liveness and readiness probes. */
export function apiRouter(deps: ApiDeps): Router {
  const api = new Router({ prefix: '/api' });
  api.use(authenticate(deps), jsonBody());
  for (const resource of [sourceRoutes(deps), destinationRoutes(deps), routeRoutes(deps)]) {
    api.use(resource.routes());
  }
  return api;
}

export function probeRouter(deps: ApiDeps): Router {
  const probes = new Router();
  probes.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  probes.get('/readyz', async (ctx) => {
    await deps.store.ping();
    ctx.body = { status: 'ready' };
  });
  return probes;
}

/** Runs outside the routers so that their 405 handling sees a request no route took before this does. */
export async function notFound(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  await next();
  if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError(`No route for ${ctx.method} ${ctx.path}`, 'NOT_FOUND');
}

export function createApiApp(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(errorMiddleware(deps.logger));
  app.use(notFound);
  for (const router of [probeRouter(deps), apiRouter(deps)]) {
    app.use(router.routes()).use(router.allowedMethods({ throw: true, methodNotAllowed: () => new MethodNotAllowedError() }));
  }
  return app;
}
