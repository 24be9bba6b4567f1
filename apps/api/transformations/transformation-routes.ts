import { z } from 'zod';
import { paginationShape } from '../../../libs/http/validate.js';
import { transformationCode, transformationEnv, transformationName } from '../../../libs/transformations/transformation-input.js';
import { transformResultSchema } from '../../../libs/transformations/transform-request.js';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';
import { resourceOperations } from '../resource-operations.js';
import { createTransformation, deleteTransformation, getTransformation, listTransformations, testTransformation, updateTransformation } from './transformation-service.js';

const createSchema = z.strictObject({ name: transformationName, code: transformationCode, env: transformationEnv.optional() });
const patchSchema = z.strictObject({ name: transformationName.optional(), code: transformationCode.optional(), env: transformationEnv.optional() });

const transformationViewSchema = z
  .object({ id: z.string(), name: z.string(), code: z.string(), env: z.record(z.string(), z.string()), createdAt: timestamp, updatedAt: timestamp })
  .meta({ id: 'Transformation' });

const example = {
  id: 'trs_01JDQ4ZF5H7K9M1P3R5T7V9X1Z',
  name: 'Tag orders',
  code: 'function transform(request) {\n  request.body.tag = "relayed";\n  return request;\n}',
  env: { API_TOKEN: '****1234' },
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_TIME,
};

const sampleSchema = z.object({ body: z.unknown(), headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])), query: z.record(z.string(), z.union([z.string(), z.array(z.string())])), path: z.string() });
const testBody = z
  .strictObject({
    code: transformationCode,
    eventId: z.string().min(1).max(64).optional(),
    sample: sampleSchema.optional(),
    env: transformationEnv.optional(),
    transformationId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: 'A stored transformation: its env is used where `env` is absent, and its stored value where `env` repeats a masked one', example: example.id }),
  })
  .refine((body) => (body.eventId === undefined) !== (body.sample === undefined), { message: 'give exactly one of eventId and sample', path: ['eventId'] });
const errorSchema = z.object({ name: z.string(), message: z.string() });
const testResultSchema = z
  .object({ result: transformResultSchema.nullable(), logs: z.array(z.string()), error: errorSchema.nullable(), durationMs: z.number() })
  .meta({ id: 'TransformationTestResult' });

export const transformationOperations: ApiOperation[] = [
  ...resourceOperations({
    collection: 'transformations',
    noun: 'Transformation',
    listQuery: z.object({ ...paginationShape }),
    create: { schema: createSchema, example: { name: example.name, code: example.code, env: { API_TOKEN: 'tok_live_1234' } } },
    patch: { schema: patchSchema, example: { code: example.code } },
    view: { schema: transformationViewSchema, example },
    summary: { schema: transformationViewSchema, example },
    // A name taken in the organization is 409 DUPLICATE_NAME; deleting one a route uses 409 IN_USE.
    writeErrors: [409],
    deleteErrors: [409],
    readOnly: ['id', 'createdAt', 'updatedAt'],
    list: listTransformations,
    insert: createTransformation,
    get: getTransformation,
    update: updateTransformation,
    remove: deleteTransformation,
  }),
  defineOperation({
    method: 'post',
    path: '/api/transformations/test',
    operationId: 'testTransformation',
    tag: 'Transformations',
    summary: 'Run code on a stored event or a sample, as a delivery would; nothing is stored or sent',
    description: 'A failing transformation (a thrown error, a time-out, a memory fault, a result of the wrong shape) is a 200 with `error` set.',
    scope: 'write',
    // An event or transformation of another organization (or none) is 404; an event whose payload retention removed 410.
    errors: [404, 410],
    body: { schema: testBody, required: true, example: { code: example.code, sample: { body: { type: 'order.created' }, headers: { 'content-type': 'application/json' }, query: {}, path: '/' } } },
    responses: {
      200: {
        description: 'What the code returned, its console lines and its error',
        body: { schema: testResultSchema, example: { result: { body: { type: 'order.created', tag: 'relayed' }, headers: { 'content-type': 'application/json' }, query: {}, path: '/' }, logs: [], error: null, durationMs: 0.42 } },
      },
    },
    handle: (deps, { tenant, body }) => testTransformation(deps, tenant, body),
  }),
];
