import { z } from 'zod';
import { paginationShape, queryString } from '../../../libs/http/validate.js';
import type { ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';
import { resourceOperations } from '../resource-operations.js';
import { routeFilterSchema } from './route-filter-schema.js';
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from './route-service.js';

const idText = z.string().min(1).max(64);
const listQuery = z.object({
  ...paginationShape,
  sourceId: queryString(64).optional().meta({ description: 'Only routes from this source', example: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7' }),
  destinationId: queryString(64).optional().meta({ description: 'Only routes to this destination', example: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T' }),
});
const filter = routeFilterSchema.optional().meta({
  description: 'A route filter (DESIGN section 6) matched against {body, headers, query, path}, or null for none; at most 10 KB, depth 10',
  example: { body: { type: { $in: ['order.created', 'order.paid'] } } },
});
const transformationId = idText.nullable().optional().meta({ description: "The transformation the route's requests go through (in this organization), or null for none", example: 'trs_01JDQ4ZF5H7K9M1P3R5T7V9X1Z' });
const delaySeconds = z.int().min(0).max(86_400).optional().meta({ description: "Deliveries are not attempted before the event's receipt plus this many seconds (default 0)", example: 0 });
const createSchema = z.strictObject({ sourceId: idText, destinationId: idText, enabled: z.boolean().optional(), filter, transformationId, delaySeconds });
/**
 * Only `enabled` and `filter` change; the two ends of a route are its identity (delete and recreate to move
 * it). They may be repeated unchanged, so a fetched route can be sent back.
 */
const patchSchema = z.strictObject({ sourceId: idText.optional(), destinationId: idText.optional(), enabled: z.boolean().optional(), filter, transformationId, delaySeconds });

const routeViewSchema = z
  .object({
    id: z.string(),
    sourceId: z.string(),
    destinationId: z.string(),
    enabled: z.boolean(),
    filter: z.record(z.string(), z.unknown()).nullable(),
    transformationId: z.string().nullable(),
    delaySeconds: z.int(),
    createdAt: timestamp,
  })
  .meta({ id: 'Route' });

const routeExample = {
  id: 'rte_01JDQ4ZF5H7K9M1P3R5T7V9X1Z',
  sourceId: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7',
  destinationId: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T',
  enabled: true,
  filter: { body: { type: { $in: ['order.created', 'order.paid'] } } },
  transformationId: null,
  delaySeconds: 0,
  createdAt: EXAMPLE_TIME,
};

export const routeOperations: ApiOperation[] = resourceOperations({
  collection: 'routes',
  noun: 'Route',
  listQuery,
  create: { schema: createSchema, example: { sourceId: routeExample.sourceId, destinationId: routeExample.destinationId } },
  patch: { schema: patchSchema, example: { enabled: false, filter: null } },
  view: { schema: routeViewSchema, example: routeExample },
  summary: { schema: routeViewSchema, example: routeExample },
  // An end of another organization (or none) is 404; a second route for the same pair 409, as is one more
  // enabled route of a source that has RELAY_MAX_ROUTES_PER_SOURCE (LIMIT_REACHED).
  writeErrors: [404, 409],
  readOnly: ['id', 'createdAt'],
  list: listRoutes,
  insert: createRoute,
  get: getRoute,
  update: updateRoute,
  remove: deleteRoute,
});
