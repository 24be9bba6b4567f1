import type Router from '@koa/router';
import Koa from 'koa';
import { MethodNotAllowedError, NotFoundError } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import { errorMiddleware } from './error-middleware.js';
import { refuseEncodedNul } from './nul-characters.js';
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
  app.use(refuseEncodedNul);
  for (const router of routers) {
    // A method the router does not know at all (TRACE, PROPFIND) is as wrong as a known one the path does
    // not serve: 405, not the router's 501 (a 5xx would be logged as the relay's own failure).
    const wrongMethod = () => new MethodNotAllowedError();
    app.use(router.routes()).use(router.allowedMethods({ throw: true, methodNotAllowed: wrongMethod, notImplemented: wrongMethod }));
  }
  return app;
}
