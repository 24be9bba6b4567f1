import { z } from 'zod';
import { paginationShape } from '../../../libs/http/validate.js';
import { API_KEY_SCOPES } from '../../../libs/store/entities/api-key.js';
import { defineOperation, listHandler, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, pageExample, pageOf, timestamp } from '../openapi/shared-schemas.js';
import { createKey, createKeyBody, currentKey, listKeys, revokeKey } from '../../../libs/keys/key-service.js';

const keySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.enum(API_KEY_SCOPES),
    prefix: z.string().nullable().meta({ description: "The key's first 8 characters; null for keys made before they were kept" }),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable().meta({ description: 'Updated at most once a minute' }),
  })
  .meta({ id: 'ApiKey' });

const keyExample: z.input<typeof keySchema> = {
  id: 'key_01JDQ61M3P5R7T9V1X3Z5B7D9F',
  name: 'dashboard',
  scope: 'read',
  prefix: 'rk_Qm3xT',
  createdAt: EXAMPLE_TIME,
  lastUsedAt: null,
};

/** Key management: `admin` keys only, but any key may read itself. */
export const keyOperations: ApiOperation[] = [
  defineOperation({
    method: 'get',
    path: '/api/keys/current',
    operationId: 'getCurrentApiKey',
    tag: 'API keys',
    summary: 'The key making this call, with its scope (any key may ask)',
    description: 'Lets a client such as the console learn what its key may do, e.g. to hide writes from a `read` key.',
    scope: 'read',
    responses: { 200: { description: 'The calling key', body: { schema: keySchema, example: { ...keyExample, lastUsedAt: EXAMPLE_TIME } } } },
    handle: (deps, { tenant }) => currentKey(deps, tenant, tenant.keyId),
  }),
  defineOperation({
    method: 'get',
    path: '/api/keys',
    operationId: 'listApiKeys',
    tag: 'API keys',
    summary: "The organization's API keys, newest first (never the keys themselves)",
    scope: 'admin',
    query: z.object(paginationShape),
    responses: { 200: { description: 'A page of keys', body: { schema: pageOf(keySchema, 'ApiKeyPage'), example: pageExample(keyExample) } } },
    handle: listHandler(listKeys),
  }),
  defineOperation({
    method: 'post',
    path: '/api/keys',
    operationId: 'createApiKey',
    tag: 'API keys',
    summary: 'Create a key: `admin` (everything), `write` (everything but keys and secrets) or `read` (GET only, no secrets)',
    description: 'The key is in this response only; store it now.',
    scope: 'admin',
    body: { schema: createKeyBody, required: true, example: { name: 'dashboard', scope: 'read' } },
    responses: {
      201: {
        description: 'The key, shown once in `key`',
        body: {
          schema: keySchema.extend({ key: z.string() }).meta({ id: 'CreatedApiKey' }),
          example: { ...keyExample, key: 'rk_Qm3xTz8Lw2YvN5bKp7Rc1HdJ9fGs4AeU' },
        },
      },
    },
    handle: (deps, { tenant, body }) => createKey(deps, tenant, body),
  }),
  defineOperation({
    method: 'delete',
    path: '/api/keys/{id}',
    operationId: 'revokeApiKey',
    tag: 'API keys',
    summary: 'Revoke a key at once, in every process; it then gets 401',
    scope: 'admin',
    responses: { 204: { description: 'Revoked' } },
    errors: [409],
    async handle(deps, { tenant, params }) {
      await revokeKey(deps, tenant, params.id!);
      // Announced here, not in the key service: the CLI revokes keys with no broker at hand.
      await deps.announce({ kind: 'key', action: 'deleted', orgId: tenant.org.id, id: params.id! });
    },
  }),
];
