import type Router from '@koa/router';
import { createRouter } from '../http/router.js';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { UnauthorizedError } from '../errors/errors.js';
import type { DocumentedOperation } from '../http/operation-spec.js';

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

/** `/metrics` as the OpenAPI document describes it. */
export const metricsOperation: DocumentedOperation = {
  method: 'get',
  path: '/metrics',
  operationId: 'getMetrics',
  tag: 'Probes',
  summary: 'Prometheus metrics (text format)',
  description: 'When RELAY_METRICS_TOKEN is set, it takes `Authorization: Bearer <RELAY_METRICS_TOKEN>` (not an API key).',
  scope: 'public',
  responses: {
    200: {
      description: 'The metrics in the Prometheus text exposition format',
      content: {
        'text/plain': {
          schema: z.string(),
          example: '# HELP relay_ingest_requests_total Ingest requests by outcome\n# TYPE relay_ingest_requests_total counter\nrelay_ingest_requests_total{outcome="received"} 1280\n',
        },
      },
    },
  },
  errors: [401],
};
