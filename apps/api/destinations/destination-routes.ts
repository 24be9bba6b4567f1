import Router from '@koa/router';
import { z } from 'zod';
import { pageEnvelope, paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { parseBody, parseQuery, tenantOf } from '../request-input.js';
import { createDestinationSchema, DESTINATION_READ_ONLY, patchDestinationSchema } from './destination-schema.js';
import {
  createDestination,
  deleteDestination,
  getDestination,
  getSigningSecret,
  listDestinations,
  rotateSigningSecret,
  updateDestination,
} from './destination-service.js';

const listQuery = z.object({ ...paginationShape, enabled: queryBoolean.optional(), search: queryString().optional() });

export function destinationRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/destinations' });
  router.get('/', async (ctx) => {
    const query = parseQuery(ctx, listQuery);
    const page = await listDestinations(deps, tenantOf(ctx), query);
    ctx.body = pageEnvelope(page.rows, page.total, query);
  });
  router.post('/', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createDestination(deps, tenantOf(ctx), parseBody(ctx, createDestinationSchema, DESTINATION_READ_ONLY));
  });
  router.get('/:id', async (ctx) => {
    ctx.body = await getDestination(deps, tenantOf(ctx), ctx.params.id);
  });
  router.patch('/:id', async (ctx) => {
    ctx.body = await updateDestination(deps, tenantOf(ctx), ctx.params.id, parseBody(ctx, patchDestinationSchema, DESTINATION_READ_ONLY));
  });
  router.delete('/:id', async (ctx) => {
    await deleteDestination(deps, tenantOf(ctx), ctx.params.id);
    ctx.status = 204;
  });
  router.get('/:id/signing-secret', async (ctx) => {
    ctx.body = await getSigningSecret(deps, tenantOf(ctx), ctx.params.id);
  });
  router.post('/:id/rotate-signing-secret', async (ctx) => {
    ctx.body = await rotateSigningSecret(deps, tenantOf(ctx), ctx.params.id);
  });
  return router;
}
