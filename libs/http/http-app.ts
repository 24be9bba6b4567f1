import type Router from '@koa/router';
import Koa from 'koa';
import { MethodNotAllowedError, NotFoundError } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import { errorMiddleware } from './error-middleware.js';
import { requestContext } from './request-context.js';

/** Runs outside the routers so that their 405 handling sees a request no route took before this does. */
async function notFound(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  await next();
  if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError(`No route for ${ctx.method} ${ctx.path}`, 'NOT_FOUND');
}

/** One Koa app for whatever routers a role serves, with the one error path and 404/405 handling. */
export function createHttpApp(routers: Router[], logger: Logger): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(requestContext(logger));
  app.use(errorMiddleware(logger));
  app.use(notFound);
  for (const router of routers) {
    app.use(router.routes()).use(router.allowedMethods({ throw: true, methodNotAllowed: () => new MethodNotAllowedError() }));
  }
  return app;
}
