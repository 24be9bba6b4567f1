import type Router from '@koa/router';
import { createRouter } from './router.js';
import { z } from 'zod';
import type { DocumentedOperation } from './operation-spec.js';

/** `/healthz`: the process answers. `/readyz`: its dependencies (store, broker) answer too. */
export function probeRouter(ready: () => Promise<void>): Router {
  const probes = createRouter();
  probes.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  probes.get('/readyz', async (ctx) => {
    await ready();
    ctx.body = { status: 'ready' };
  });
  return probes;
}

/** The probes as the OpenAPI document describes them. */
export const probeOperations: DocumentedOperation[] = [
  {
    method: 'get',
    path: '/healthz',
    operationId: 'getHealthz',
    tag: 'Probes',
    summary: 'Liveness: the process answers',
    scope: 'public',
    responses: { 200: { description: 'Alive', body: { schema: z.object({ status: z.literal('ok') }).meta({ id: 'Liveness' }), example: { status: 'ok' } } } },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'getReadyz',
    tag: 'Probes',
    summary: 'Readiness: the store (and the broker, where the role uses one) answers',
    scope: 'public',
    responses: { 200: { description: 'Ready', body: { schema: z.object({ status: z.literal('ready') }).meta({ id: 'Readiness' }), example: { status: 'ready' } } } },
    errors: [503],
  },
];
