import type Router from '@koa/router';
import { z } from 'zod';
import { paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { tenantOf } from '../request-input.js';
import { resourceRoutes } from '../resource-routes.js';
import { createSourceSchema, patchSourceSchema, SOURCE_READ_ONLY } from './source-schema.js';
import { createSource, deleteSource, getSource, listSources, rotateSourceSecret, updateSource } from './source-service.js';

const listQuery = z.object({ ...paginationShape, enabled: queryBoolean.optional(), search: queryString().optional() });

export function sourceRoutes(deps: ApiDeps): Router {
  const router = resourceRoutes(deps, {
    collection: 'sources',
    listQuery,
    createSchema: createSourceSchema,
    patchSchema: patchSourceSchema,
    readOnly: SOURCE_READ_ONLY,
    list: listSources,
    create: createSource,
    get: getSource,
    update: updateSource,
    remove: deleteSource,
  });
  router.post('/:id/rotate-secret', async (ctx) => {
    ctx.body = await rotateSourceSecret(deps, tenantOf(ctx), ctx.params.id);
  });
  return router;
}
