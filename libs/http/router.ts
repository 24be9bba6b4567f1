import Router, { type RouterOptions } from '@koa/router';

/**
 * A router whose routes match paths case-sensitively. @koa/router matches routes without regard to case
 * by default but a router's `use()` middleware by exact prefix, so `/API/sources` reached the routes
 * of `/api` without passing its authentication. Every router is made with this one.
 */
export function createRouter(options: RouterOptions = {}): Router {
  return new Router({ ...options, sensitive: true });
}
