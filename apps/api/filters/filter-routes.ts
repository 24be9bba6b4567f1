import { z } from 'zod';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { filterTestBody, testFilter } from './filter-test.js';

/** `POST /api/filters/test`: try a route filter on a stored event or a sample before saving it. */
export const filterOperations: ApiOperation[] = [
  defineOperation({
    method: 'post',
    path: '/api/filters/test',
    operationId: 'testFilter',
    tag: 'Routes',
    summary: 'Whether a route filter matches a stored event or a sample; nothing changes',
    scope: 'write',
    body: {
      schema: filterTestBody,
      required: true,
      example: { filter: { body: { type: 'order.created' } }, sample: { body: { type: 'order.created' }, headers: { 'x-shop-topic': 'orders/create' } } },
    },
    responses: { 200: { description: 'Whether it matched', body: { schema: z.object({ matched: z.boolean() }).meta({ id: 'FilterTestResult' }), example: { matched: true } } } },
    // An eventId that is unknown (404) or whose payload expired (410).
    errors: [404, 409, 410],
    handle: (deps, { tenant, body }) => testFilter(deps, tenant, body),
  }),
];
