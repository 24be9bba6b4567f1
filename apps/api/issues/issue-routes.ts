import { z } from 'zod';
import { ISSUE_KINDS, ISSUE_STATUSES } from '../../../libs/issues/issue-kinds.js';
import { paginationShape, queryString } from '../../../libs/http/validate.js';
import { defineOperation, listHandler, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, pageExample, pageOf, timestamp } from '../openapi/shared-schemas.js';
import { replayJobExample, replayJobSchema } from '../replays/replay-routes.js';
import { MAX_REPLAY_RATE } from '../replays/replay-schema.js';
import { getIssue, listIssues, replayIssue, updateIssue } from './issue-service.js';

const listQuery = z.object({
  ...paginationShape,
  status: queryString(16).pipe(z.enum(ISSUE_STATUSES)).optional().meta({ description: 'Only issues in this state', example: 'open' }),
  destinationId: queryString(64).optional().meta({ description: "Only this destination's issues", example: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T' }),
  kind: queryString(16).pipe(z.enum(ISSUE_KINDS)).optional().meta({ description: 'Only issues of this kind', example: 'http_5xx' }),
});

export const issueViewSchema = z
  .object({
    id: z.string(),
    destinationId: z.string(),
    kind: z.enum(ISSUE_KINDS),
    status: z.enum(ISSUE_STATUSES),
    firstSeenAt: timestamp,
    lastSeenAt: timestamp,
    failedAttempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    sampleEventIds: z.array(z.string()).max(10).meta({ description: 'The latest events that failed this way, newest first' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Issue' });

const issueExample: z.input<typeof issueViewSchema> = {
  id: 'iss_01JDQ8C3D5F7H9K1M3P5R7T9V1',
  destinationId: 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T',
  kind: 'http_5xx',
  status: 'open',
  firstSeenAt: EXAMPLE_TIME,
  lastSeenAt: EXAMPLE_TIME,
  failedAttempts: 42,
  lastStatusCode: 503,
  lastError: 'HTTP 503',
  sampleEventIds: ['evt_01JDQ5A1B3C5D7E9F1G3H5J7K9'],
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_TIME,
};

const patchBody = z.strictObject({ status: z.enum(ISSUE_STATUSES) });
const replayBody = z.strictObject({ maxPerSecond: z.number().int().min(1).max(MAX_REPLAY_RATE).default(100) });
const idParam = { id: { description: 'The issue id', example: issueExample.id } };

/** `/api/issues`: failed attempts grouped per destination and failure kind (DESIGN section 7, "Issues"). */
export const issueOperations: ApiOperation[] = [
  defineOperation({
    method: 'get',
    path: '/api/issues',
    operationId: 'listIssues',
    tag: 'Issues',
    summary: 'Issues, the latest seen first',
    scope: 'read',
    query: listQuery,
    responses: { 200: { description: 'A page of issues', body: { schema: pageOf(issueViewSchema, 'IssuePage'), example: pageExample(issueExample) } } },
    handle: listHandler(listIssues),
  }),
  defineOperation({
    method: 'get',
    path: '/api/issues/{id}',
    operationId: 'getIssue',
    tag: 'Issues',
    summary: 'An issue',
    scope: 'read',
    pathParams: idParam,
    responses: { 200: { description: 'The issue', body: { schema: issueViewSchema, example: issueExample } } },
    handle: (deps, { tenant, params }) => getIssue(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'patch',
    path: '/api/issues/{id}',
    operationId: 'updateIssue',
    tag: 'Issues',
    summary: 'Acknowledge, resolve or ignore an issue (or open it again)',
    description: 'A resolved issue reopens at the next failure of its kind; an ignored one stays ignored. Resolving notifies `issue.resolved`.',
    scope: 'write',
    pathParams: idParam,
    body: { schema: patchBody, required: true, example: { status: 'acknowledged' } },
    responses: { 200: { description: 'The issue', body: { schema: issueViewSchema, example: { ...issueExample, status: 'acknowledged' } } } },
    handle: (deps, { tenant, params, body }) => updateIssue(deps, tenant, params.id!, body.status),
  }),
  defineOperation({
    method: 'post',
    path: '/api/issues/{id}/replay',
    operationId: 'replayIssue',
    tag: 'Issues',
    summary: "Replay the issue's failed deliveries since it was first seen, paced, to its destination",
    scope: 'write',
    status: 202,
    pathParams: idParam,
    body: { schema: replayBody, required: false, example: { maxPerSecond: 50 } },
    responses: { 202: { description: 'The replay job, with `filter: {issueId}`', body: { schema: replayJobSchema, example: { ...replayJobExample, filter: { issueId: issueExample.id } } } } },
    handle: (deps, { tenant, params, body }) => replayIssue(deps, tenant, params.id!, body?.maxPerSecond ?? 100),
  }),
];
