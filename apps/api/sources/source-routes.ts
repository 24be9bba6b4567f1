import Router from '@koa/router';
import { z } from 'zod';
import { pageEnvelope, paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { parseBody, parseQuery, tenantOf } from '../request-input.js';
import { createSourceSchema, patchSourceSchema, SOURCE_READ_ONLY } from './source-schema.js';
import { createSource, deleteSource, getSource, listSources, rotateSourceSecret, updateSource } from './source-service.js';

const listQuery = z.object({ ...paginationShape, enabled: queryBoolean.optional(), search: queryString().optional() });

export function sourceRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/sources' });
  router.get('/', async (ctx) => {
    const query = parseQuery(ctx, listQuery);
    const page = await listSources(deps, tenantOf(ctx), query);
    ctx.body = pageEnvelope(page.rows, page.total, query);
  });
  router.post('/', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createSource(deps, tenantOf(ctx), parseBody(ctx, createSourceSchema, SOURCE_READ_ONLY));
  });
  router.get('/:id', async (ctx) => {
    ctx.body = await getSource(deps, tenantOf(ctx), ctx.params.id);
  });
  router.patch('/:id', async (ctx) => {
    ctx.body = await updateSource(deps, tenantOf(ctx), ctx.params.id, parseBody(ctx, patchSourceSchema, SOURCE_READ_ONLY));
  });
  router.delete('/:id', async (ctx) => {
    await deleteSource(deps, tenantOf(ctx), ctx.params.id);
    ctx.status = 204;
  });
  router.post('/:id/rotate-secret', async (ctx) => {
    ctx.body = await rotateSourceSecret(deps, tenantOf(ctx), ctx.params.id);
  });
  return router;
}
