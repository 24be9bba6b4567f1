import Router from '@koa/router';
import { z } from 'zod';
import { pageEnvelope, paginationShape, queryString } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { parseBody, parseQuery, tenantOf } from '../request-input.js';
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from './route-service.js';

const ROUTE_READ_ONLY = ['id', 'createdAt'];
const idText = z.string().min(1).max(64);
const listQuery = z.object({ ...paginationShape, sourceId: queryString(64).optional(), destinationId: queryString(64).optional() });
const createSchema = z.strictObject({ sourceId: idText, destinationId: idText, enabled: z.boolean().optional() });
/**
 * Only `enabled` changes; the two ends of a route are its identity (delete and recreate to move it). They may
 * be repeated unchanged, so a fetched route can be sent back.
 */
const patchSchema = z.strictObject({ sourceId: idText.optional(), destinationId: idText.optional(), enabled: z.boolean().optional() });

export function routeRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/routes' });
  router.get('/', async (ctx) => {
    const query = parseQuery(ctx, listQuery);
    const page = await listRoutes(deps, tenantOf(ctx), query);
    ctx.body = pageEnvelope(page.rows, page.total, query);
  });
  router.post('/', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createRoute(deps, tenantOf(ctx), parseBody(ctx, createSchema, ROUTE_READ_ONLY));
  });
  router.get('/:id', async (ctx) => {
    ctx.body = await getRoute(deps, tenantOf(ctx), ctx.params.id);
  });
  router.patch('/:id', async (ctx) => {
    ctx.body = await updateRoute(deps, tenantOf(ctx), ctx.params.id, parseBody(ctx, patchSchema, ROUTE_READ_ONLY));
  });
  router.delete('/:id', async (ctx) => {
    await deleteRoute(deps, tenantOf(ctx), ctx.params.id);
    ctx.status = 204;
  });
  return router;
}
