import { z } from 'zod';
import type { DocumentedOperation } from '../../../libs/http/operation-spec.js';

/**
 * `POST /ingest/{org}/{source}` as the OpenAPI document describes it. The route itself stays a bare Koa
 * route (apps/gateway/ingest-router.ts): its body is read raw, streaming, under the plan's limit.
 */
export const ingestOperation: DocumentedOperation = {
  method: 'post',
  path: '/ingest/{org}/{source}',
  operationId: 'ingestWebhook',
  tag: 'Ingest',
  summary: 'Receive a webhook from a provider (public; verified by the source)',
  description:
    'Any body and content type is accepted and stored byte-exact (JSON, form and text are parsed for search and masking). ' +
    "A `200` means the event is durable. An identical body on the same source within 5 minutes, or a repeat by the source's dedup strategy, answers `duplicate` with the first event's id.",
  scope: 'public',
  pathParams: {
    org: { description: 'The organization slug', example: 'acme' },
    source: { description: 'The source slug', example: 'github' },
  },
  body: { schema: z.unknown(), required: false, example: { action: 'opened', number: 42 } },
  responses: {
    200: {
      description: 'Stored (`received`) or recognized as a repeat (`duplicate`)',
      body: {
        schema: z.object({ eventId: z.string(), status: z.enum(['received', 'duplicate']) }).meta({ id: 'IngestResult' }),
        example: { eventId: 'evt_01JDQ5A1B3C5D7E9F1G3H5J7K9', status: 'received' },
      },
    },
  },
  errors: [400, 403, 404, 413, 429, 503],
};
