import type Router from '@koa/router';
import { createRouter } from '../http/router.js';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { UnauthorizedError } from '../errors/errors.js';

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** `GET /metrics` in Prometheus text format, behind a bearer token when one is configured. */
export function metricsRouter(registry: Pick<Registry, 'contentType' | 'metrics'>, token?: string): Router {
  const router = createRouter();
  router.get('/metrics', async (ctx) => {
    if (token !== undefined && !sameText(ctx.get('authorization'), `Bearer ${token}`)) {
      throw new UnauthorizedError('A valid metrics token is required: Authorization: Bearer <RELAY_METRICS_TOKEN>');
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return router;
}
