import { z } from 'zod';
import { rotationBody } from '../secret-rotation.js';
import { paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { resourceOperations } from '../resource-operations.js';
import { createSourceSchema, patchSourceSchema, SOURCE_READ_ONLY } from '../../../libs/sources/source-schema.js';
import { createSource, deleteSource, getSource, listSources, rotateSourceSecret, updateSource } from './source-service.js';
import { rotatedSecretSchema, sourceExample, sourceSummaryExample, sourceSummarySchema, sourceViewSchema } from './source-view.js';

const listQuery = z.object({
  ...paginationShape,
  enabled: queryBoolean.optional().meta({ description: 'Only enabled (true) or disabled (false) ones', example: 'true' }),
  search: queryString().optional().meta({ description: 'Matches the name or the slug, case-insensitively', example: 'git' }),
});

export const sourceOperations: ApiOperation[] = [
  ...resourceOperations({
    collection: 'sources',
    noun: 'Source',
    listQuery,
    create: {
      schema: createSourceSchema,
      example: { name: 'GitHub', slug: 'github', provider: 'codehost', rejectInvalidSignatures: true, dedupEnabled: true, maskFields: ['$.sender.email'] },
    },
    patch: { schema: patchSourceSchema, example: { enabled: false, description: 'Paused while the repository moves' } },
    view: { schema: sourceViewSchema, example: sourceExample },
    summary: { schema: sourceSummarySchema, example: sourceSummaryExample },
    writeErrors: [409],
    readOnly: SOURCE_READ_ONLY,
    list: listSources,
    insert: createSource,
    get: getSource,
    update: updateSource,
    remove: deleteSource,
  }),
  defineOperation({
    method: 'post',
    path: '/api/sources/{id}/rotate-secret',
    operationId: 'rotateSourceSecret',
    tag: 'Sources',
    summary: 'Replace the verification secret, at once or with a grace period',
    description: 'The new secret appears in this response only. With `graceSeconds`, signatures made with the previous secret are accepted until `previousSecretExpiresAt`; rotating again during a grace period drops the oldest secret at once.',
    scope: 'admin',
    body: { schema: rotationBody, required: false, example: { graceSeconds: 86_400 } },
    responses: {
      200: {
        description: 'The new secret',
        body: {
          schema: rotatedSecretSchema,
          example: {
            id: sourceExample.id,
            verificationConfig: { type: 'codehost', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
            message: 'Secret rotated. The previous secret is no longer valid; store this one now, it will not be shown again.',
          },
        },
      },
    },
    handle: (deps, { tenant, params, body }) => rotateSourceSecret(deps, tenant, params.id!, body.graceSeconds),
  }),
];
