import type Router from '@koa/router';
import { z } from 'zod';
import { paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { tenantOf } from '../request-input.js';
import { resourceRoutes } from '../resource-routes.js';
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
  const router = resourceRoutes(deps, {
    collection: 'destinations',
    listQuery,
    createSchema: createDestinationSchema,
    patchSchema: patchDestinationSchema,
    readOnly: DESTINATION_READ_ONLY,
    list: listDestinations,
    create: createDestination,
    get: getDestination,
    update: updateDestination,
    remove: deleteDestination,
  });
  router.get('/:id/signing-secret', async (ctx) => {
    ctx.body = await getSigningSecret(deps, tenantOf(ctx), ctx.params.id);
  });
  router.post('/:id/rotate-signing-secret', async (ctx) => {
    ctx.body = await rotateSigningSecret(deps, tenantOf(ctx), ctx.params.id);
  });
  return router;
}
