import { z } from 'zod';
import { probeOperations } from '../../libs/http/probe-router.js';
import { ingestOperation } from './openapi/ingest-operation.js';
import { defineOperation, type ApiOperation } from './api-operation.js';
import { destinationOperations } from './destinations/destination-routes.js';
import { eventOperations } from './events/event-routes.js';
import { filterOperations } from './filters/filter-routes.js';
import { issueOperations } from './issues/issue-routes.js';
import { keyOperations } from './keys/key-routes.js';
import { channelOperations } from './notifications/channel-routes.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import { replayOperations } from './replays/replay-routes.js';
import { routeOperations } from './routes/route-routes.js';
import { sourceOperations } from './sources/source-routes.js';
import { transferOperations } from './transfer/transfer-routes.js';
import { transformationOperations } from './transformations/transformation-routes.js';

let document: ReturnType<typeof buildOpenApiDocument> | undefined;

/** The document of every endpoint the relay serves, built once. */
export function openApiDocument() {
  return (document ??= buildOpenApiDocument([...API_OPERATIONS, ingestOperation, ...probeOperations]));
}

const openApiOperation = defineOperation({
  method: 'get',
  path: '/api/openapi.json',
  operationId: 'getOpenApiDocument',
  tag: 'Document',
  summary: 'This OpenAPI 3.1 document (no key needed)',
  scope: 'public',
  responses: { 200: { description: 'The document', content: { 'application/json': { schema: z.looseObject({ openapi: z.string() }), example: { openapi: '3.1.0' } } } } },
  handle: async () => openApiDocument(),
});

/**
 * Every management API operation, in routing order: transfer's literal `export`, `import` and `bulk`
 * segments before the resources' `{id}`. A module adds its operations here; the router and the OpenAPI
 * document are both built from this list.
 */
export const API_OPERATIONS: readonly ApiOperation[] = [
  openApiOperation,
  ...transferOperations,
  ...sourceOperations,
  ...destinationOperations,
  ...routeOperations,
  ...transformationOperations,
  ...eventOperations,
  ...filterOperations,
  ...replayOperations,
  ...issueOperations,
  ...channelOperations,
  ...keyOperations,
];
