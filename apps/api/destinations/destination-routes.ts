import { z } from 'zod';
import { rotationBody } from '../secret-rotation.js';
import { paginationShape, queryBoolean, queryString } from '../../../libs/http/validate.js';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';
import { resourceOperations } from '../resource-operations.js';
import { getDestinationHealth } from './destination-health.js';
import { createDestinationSchema, DESTINATION_READ_ONLY, patchDestinationSchema } from '../../../libs/destinations/destination-schema.js';
import {
  createDestination,
  deleteDestination,
  getDestination,
  getSigningSecret,
  listDestinations,
  rotateSigningSecret,
  updateDestination,
} from './destination-service.js';
import { destinationTestBody, testDestination } from './destination-test.js';
import { circuitStateSchema, destinationExample, destinationSummaryExample, destinationSummarySchema, destinationViewSchema } from './destination-view.js';

const listQuery = z.object({
  ...paginationShape,
  enabled: queryBoolean.optional().meta({ description: 'Only enabled (true) or disabled (false) ones', example: 'true' }),
  search: queryString().optional().meta({ description: 'Matches the name or the URL, case-insensitively', example: 'orders' }),
});

const healthSchema = z
  .object({
    successRate: z.number().nullable(),
    avgLatency: z.number().nullable(),
    p50Latency: z.number().nullable(),
    p95Latency: z.number().nullable(),
    p99Latency: z.number().nullable(),
    totalDeliveries: z.number().int(),
    successfulDeliveries: z.number().int(),
    failedDeliveries: z.number().int(),
    lastDeliveryAt: timestamp.nullable(),
    lastSuccessAt: timestamp.nullable(),
    lastFailureAt: timestamp.nullable(),
    status: z.enum(['healthy', 'degraded', 'failing', 'unknown']),
    circuitState: circuitStateSchema,
  })
  .meta({ id: 'DestinationHealth' });

/** SPEC 4.3.1: `responseBody` on success, `error` on failure; `statusCode` null when no HTTP answer came. */
const testResultSchema = z
  .object({
    success: z.boolean(),
    statusCode: z.number().int().nullable().meta({ description: 'null when no HTTP answer arrived (timeout, refused connection)' }),
    latency: z.number(),
    responseBody: z.string().optional(),
    error: z.string().optional(),
    message: z.string(),
  })
  .meta({ id: 'DestinationTestResult' });

const signingSecretSchema = z.object({ secret: z.string() }).meta({ id: 'SigningSecret' });
const rotatedSigningSecretSchema = z
  .object({
    secret: z.string(),
    previousSecretExpiresAt: z.string().optional().meta({ description: 'With a grace period: until when deliveries also carry the previous secret\'s signature (after the new one\'s)' }),
    message: z.string(),
  })
  .meta({ id: 'RotatedSigningSecret' });
const SIGNING_SECRET = 'whsec_Jq2mHhV4nHc3bW8yZr6sP0dX1tLk9aQeUf5oGiN7c2E=';

export const destinationOperations: ApiOperation[] = [
  ...resourceOperations({
    collection: 'destinations',
    noun: 'Destination',
    listQuery,
    create: {
      schema: createDestinationSchema,
      example: { name: 'Orders service', url: 'https://orders.example.com/hooks', authType: 'bearer', authConfig: { token: 'sk_live_9f3a' }, retryPolicy: { maxRetries: 8 } },
    },
    patch: { schema: patchDestinationSchema, example: { timeoutMs: 10000, enabled: true } },
    view: { schema: destinationViewSchema, example: destinationExample },
    summary: { schema: destinationSummarySchema, example: destinationSummaryExample },
    writeErrors: [409],
    readOnly: DESTINATION_READ_ONLY,
    list: listDestinations,
    insert: createDestination,
    get: getDestination,
    update: updateDestination,
    remove: deleteDestination,
  }),
  defineOperation({
    method: 'get',
    path: '/api/destinations/{id}/signing-secret',
    operationId: 'getDestinationSigningSecret',
    tag: 'Destinations',
    summary: 'The secret deliveries are signed with (Standard Webhooks)',
    scope: 'admin',
    responses: { 200: { description: 'The signing secret', body: { schema: signingSecretSchema, example: { secret: SIGNING_SECRET } } } },
    handle: (deps, { tenant, params }) => getSigningSecret(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'post',
    path: '/api/destinations/{id}/rotate-signing-secret',
    operationId: 'rotateDestinationSigningSecret',
    tag: 'Destinations',
    summary: 'Replace the signing secret of deliveries, at once or with a grace period',
    description: 'With `graceSeconds`, deliveries carry two signatures in `webhook-signature` (the new secret\'s first) until `previousSecretExpiresAt`. Rotating again during a grace period drops the oldest secret at once.',
    scope: 'admin',
    body: { schema: rotationBody, required: false, example: { graceSeconds: 86_400 } },
    responses: {
      200: {
        description: 'The new signing secret',
        body: {
          schema: rotatedSigningSecretSchema,
          example: { secret: SIGNING_SECRET, previousSecretExpiresAt: '2026-12-02T18:00:00.000Z', message: 'Signing secret rotated. Deliveries carry signatures of this secret and of the previous one until 2026-12-02T18:00:00.000Z.' },
        },
      },
    },
    handle: (deps, { tenant, params, body }) => rotateSigningSecret(deps, tenant, params.id!, body.graceSeconds),
  }),
  defineOperation({
    method: 'get',
    path: '/api/destinations/{id}/health',
    operationId: 'getDestinationHealth',
    tag: 'Destinations',
    summary: 'Delivery health over the last 24 hours',
    scope: 'read',
    responses: {
      200: {
        description: 'Health (SPEC 2.6)',
        body: {
          schema: healthSchema,
          example: {
            successRate: 97.5,
            avgLatency: 84,
            p50Latency: 60,
            p95Latency: 250,
            p99Latency: 500,
            totalDeliveries: 400,
            successfulDeliveries: 390,
            failedDeliveries: 10,
            lastDeliveryAt: EXAMPLE_TIME,
            lastSuccessAt: EXAMPLE_TIME,
            lastFailureAt: '2026-11-23T17:42:10.000Z',
            status: 'healthy',
            circuitState: 'closed',
          },
        },
      },
    },
    handle: (deps, { tenant, params }) => getDestinationHealth(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'post',
    path: '/api/destinations/{id}/test',
    operationId: 'testDestination',
    tag: 'Destinations',
    summary: 'Send one test webhook now, as a delivery would be sent; nothing is stored or retried',
    description: 'A failed test (non-2xx, timeout, refused connection) is a 200 with `success: false`.',
    scope: 'write',
    body: { schema: destinationTestBody, required: false, example: { payload: { type: 'order.created', data: { id: 'ord_1001' } } } },
    responses: {
      200: {
        description: 'The outcome of the test request (SPEC 4.3.1)',
        body: {
          schema: testResultSchema,
          example: { success: true, statusCode: 200, latency: 84, responseBody: '{"ok":true}', message: 'The destination answered 200' },
        },
      },
    },
    handle: (deps, { tenant, params, body }) => testDestination(deps, tenant, params.id!, body.payload),
  }),
];
