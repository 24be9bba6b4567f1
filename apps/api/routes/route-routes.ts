import type Router from '@koa/router';
import { z } from 'zod';
import { paginationShape, queryString } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { resourceRoutes } from '../resource-routes.js';
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from './route-service.js';

const idText = z.string().min(1).max(64);
const listQuery = z.object({ ...paginationShape, sourceId: queryString(64).optional(), destinationId: queryString(64).optional() });
const createSchema = z.strictObject({ sourceId: idText, destinationId: idText, enabled: z.boolean().optional() });
/**
 * Only `enabled` changes; the two ends of a route are its identity (delete and recreate to move it). They may
 * be repeated unchanged, so a fetched route can be sent back.
 */
const patchSchema = z.strictObject({ sourceId: idText.optional(), destinationId: idText.optional(), enabled: z.boolean().optional() });

export function routeRoutes(deps: ApiDeps): Router {
  return resourceRoutes(deps, {
    collection: 'routes',
    listQuery,
    createSchema,
    patchSchema,
    readOnly: ['id', 'createdAt'],
    list: listRoutes,
    create: createRoute,
    get: getRoute,
    update: updateRoute,
    remove: deleteRoute,
  });
}
