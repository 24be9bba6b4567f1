import { z } from 'zod';
import { paginationShape } from '../../../libs/http/validate.js';
import { defineOperation, listHandler, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, pageExample, pageOf, timestamp } from '../openapi/shared-schemas.js';
import { EVENT_STATUSES } from '../events/event-schema.js';
import { createReplayBody } from './replay-schema.js';
import { cancelReplay, createReplay, dryRunReplay, getReplay, listReplays } from './replay-service.js';

const listQuery = z.object(paginationShape);

export const replayJobSchema = z
  .object({
    id: z.string(),
    status: z.enum(['running', 'completed', 'cancelled', 'failed']),
    filter: z.object({
      sourceId: z.string().optional(),
      destinationId: z.string().optional(),
      status: z.enum(EVENT_STATUSES).optional(),
      from: timestamp.optional(),
      to: timestamp.optional(),
      search: z.string().optional(),
      signatureValid: z.boolean().optional(),
      issueId: z.string().optional(),
    }),
    destinationIds: z.array(z.string()).nullable(),
    matched: z.number().int(),
    replayed: z.number().int(),
    skipped: z.number().int(),
    maxPerSecond: z.number().int(),
    createdAt: timestamp,
    finishedAt: timestamp.nullable(),
    error: z.string().nullable().meta({ description: 'Why a `failed` job stopped (a named destination deleted meanwhile, say); null otherwise' }),
  })
  .meta({ id: 'ReplayJob' });

const dryRunSchema = z.object({ matched: z.number().int(), sample: z.array(z.string()).max(10) }).meta({ id: 'ReplayDryRun' });

export const replayJobExample: z.input<typeof replayJobSchema> = {
  id: 'rpl_01JDQ7B2C4D6F8H0J2K4M6N8P0',
  status: 'running',
  filter: { sourceId: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7', status: 'failed', from: '2026-11-23T00:00:00.000Z' },
  destinationIds: null,
  matched: 1200,
  replayed: 300,
  skipped: 2,
  maxPerSecond: 100,
  createdAt: EXAMPLE_TIME,
  finishedAt: null,
  error: null,
};

/** `/api/replays`: replay every event matching a query, in the background, previewed with a dry run. */
export const replayOperations: ApiOperation[] = [
  defineOperation({
    method: 'get',
    path: '/api/replays',
    operationId: 'listReplays',
    tag: 'Replays',
    summary: 'Replay jobs, newest first',
    scope: 'read',
    query: listQuery,
    responses: { 200: { description: 'A page of replay jobs', body: { schema: pageOf(replayJobSchema, 'ReplayJobPage'), example: pageExample(replayJobExample) } } },
    handle: listHandler(listReplays),
  }),
  defineOperation({
    method: 'post',
    path: '/api/replays',
    operationId: 'createReplay',
    tag: 'Replays',
    summary: 'Replay every event matching a filter, paced; `dryRun` only counts them',
    description: 'The events are fixed when the job is created; the job survives restarts. With `dryRun: true` the answer is `200 {matched, sample}` and nothing changes.',
    scope: 'write',
    status: 202,
    body: { schema: createReplayBody, required: true, example: { filter: { sourceId: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7', status: 'failed', from: '2026-11-23T00:00:00Z' }, maxPerSecond: 100 } },
    responses: {
      202: { description: 'The job, started', body: { schema: replayJobSchema, example: replayJobExample } },
      200: { description: 'With dryRun: how many events match, and up to 10 of their ids', body: { schema: dryRunSchema, example: { matched: 1200, sample: ['evt_01JDQ5A1B3C5D7E9F1G3H5J7K9'] } } },
    },
    // A named destination that is unknown or another organization's.
    errors: [404],
    handle: async (deps, { ctx, tenant, body }) => {
      if (!body.dryRun) return createReplay(deps, tenant, body);
      ctx.status = 200;
      return dryRunReplay(deps, tenant, body);
    },
  }),
  defineOperation({
    method: 'get',
    path: '/api/replays/{id}',
    operationId: 'getReplay',
    tag: 'Replays',
    summary: 'A replay job and its progress',
    scope: 'read',
    pathParams: { id: { description: 'The replay job id', example: replayJobExample.id } },
    responses: { 200: { description: 'The job', body: { schema: replayJobSchema, example: replayJobExample } } },
    handle: (deps, { tenant, params }) => getReplay(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'post',
    path: '/api/replays/{id}/cancel',
    operationId: 'cancelReplay',
    tag: 'Replays',
    summary: 'Stop a running job where it is; a finished one is 409 REPLAY_FINISHED',
    scope: 'write',
    pathParams: { id: { description: 'The replay job id', example: replayJobExample.id } },
    responses: { 200: { description: 'The job, now cancelled', body: { schema: replayJobSchema, example: { ...replayJobExample, status: 'cancelled', finishedAt: EXAMPLE_TIME } } } },
    errors: [409],
    handle: (deps, { tenant, params }) => cancelReplay(deps, tenant, params.id!),
  }),
];
