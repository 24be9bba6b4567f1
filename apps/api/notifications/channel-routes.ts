import { z } from 'zod';
import { urlSchema } from '../../../libs/destinations/destination-schema.js';
import { paginationShape } from '../../../libs/http/validate.js';
import { CHANNEL_TYPES } from '../../../libs/notifications/channels.js';
import { NOTIFICATION_TOPICS } from '../../../libs/notifications/notification-topics.js';
import { nameSchema } from '../../../libs/sources/source-schema.js';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';
import { resourceOperations } from '../resource-operations.js';
import {
  createChannel,
  deleteChannel,
  getChannel,
  getChannelSigningSecret,
  listChannels,
  rotateChannelSigningSecret,
  testChannel,
  updateChannel,
} from './channel-service.js';

const topicsSchema = z
  .array(z.enum(NOTIFICATION_TOPICS))
  .min(1, 'must name at least one topic')
  .max(NOTIFICATION_TOPICS.length * 2)
  .meta({ description: 'What the channel is told of; all of them by default' });

const createSchema = z.strictObject({ name: nameSchema, type: z.enum(CHANNEL_TYPES), url: urlSchema, topics: topicsSchema.optional(), enabled: z.boolean().optional() });
// A masked URL sent back (`https://host/****`) keeps the stored one, so it is taken as given here.
const patchSchema = z.strictObject({ name: nameSchema.optional(), type: z.enum(CHANNEL_TYPES).optional(), url: z.union([urlSchema, z.string().regex(/\/\*\*\*\*$/)]).optional(), topics: topicsSchema.optional(), enabled: z.boolean().optional() });

const channelViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(CHANNEL_TYPES),
    url: z.string().meta({ description: 'Scheme and host, the rest shown as `/****` (a Slack URL is a credential)' }),
    topics: z.array(z.enum(NOTIFICATION_TOPICS)),
    enabled: z.boolean(),
    lastDeliveredAt: timestamp.nullable(),
    lastFailureAt: timestamp.nullable(),
    lastError: z.string().nullable().meta({ description: 'Why the latest failed send failed' }),
    createdAt: timestamp,
  })
  .meta({ id: 'NotificationChannel' });

const example: z.input<typeof channelViewSchema> = {
  id: 'nch_01JDQ9D4E6G8J0K2M4P6R8T0W2',
  name: 'On-call',
  type: 'webhook',
  url: 'https://ops.example.com/****',
  topics: [...NOTIFICATION_TOPICS],
  enabled: true,
  lastDeliveredAt: EXAMPLE_TIME,
  lastFailureAt: null,
  lastError: null,
  createdAt: EXAMPLE_TIME,
};

const testResultSchema = z
  .object({ delivered: z.boolean(), statusCode: z.number().int().nullable(), error: z.string().nullable() })
  .meta({ id: 'NotificationChannelTestResult' });
const secretSchema = z.object({ secret: z.string() }).meta({ id: 'NotificationChannelSecret' });
const rotatedSchema = z.object({ secret: z.string(), message: z.string() }).meta({ id: 'RotatedNotificationChannelSecret' });
const SECRET = 'whsec_Jq2mHhV4nHc3bW8yZr6sP0dX1tLk9aQeUf5oGiN7c2E=';
const idParam = { id: { description: 'The notification channel id', example: example.id } };

/** `/api/notification-channels`: where operators are told of issues and disabled destinations. */
export const channelOperations: ApiOperation[] = [
  ...resourceOperations({
    collection: 'notification-channels',
    noun: 'NotificationChannel',
    listQuery: z.object({ ...paginationShape }),
    create: { schema: createSchema, example: { name: 'On-call', type: 'webhook', url: 'https://ops.example.com/relay-events' } },
    patch: { schema: patchSchema, example: { topics: ['issue.opened', 'destination.disabled'] } },
    view: { schema: channelViewSchema, example },
    summary: { schema: channelViewSchema, example },
    readOnly: ['id', 'lastDeliveredAt', 'lastFailureAt', 'lastError', 'createdAt'],
    list: listChannels,
    insert: createChannel,
    get: getChannel,
    update: updateChannel,
    remove: deleteChannel,
  }),
  defineOperation({
    method: 'post',
    path: '/api/notification-channels/{id}/test',
    operationId: 'testNotificationChannel',
    tag: 'NotificationChannels',
    summary: 'Send a `test` notification now',
    description: 'A failed send is a 200 with `delivered: false`; it shows on the channel as `lastFailureAt` and `lastError`.',
    scope: 'write',
    pathParams: idParam,
    responses: { 200: { description: 'What came of it', body: { schema: testResultSchema, example: { delivered: true, statusCode: 200, error: null } } } },
    handle: (deps, { tenant, params }) => testChannel(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'get',
    path: '/api/notification-channels/{id}/signing-secret',
    operationId: 'getNotificationChannelSigningSecret',
    tag: 'NotificationChannels',
    summary: "A webhook channel's Standard Webhooks signing secret",
    scope: 'admin',
    pathParams: idParam,
    responses: { 200: { description: 'The secret', body: { schema: secretSchema, example: { secret: SECRET } } } },
    handle: (deps, { tenant, params }) => getChannelSigningSecret(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'post',
    path: '/api/notification-channels/{id}/rotate-signing-secret',
    operationId: 'rotateNotificationChannelSigningSecret',
    tag: 'NotificationChannels',
    summary: "Replace a webhook channel's signing secret",
    scope: 'admin',
    pathParams: idParam,
    responses: { 200: { description: 'The new secret', body: { schema: rotatedSchema, example: { secret: SECRET, message: 'Signing secret rotated.' } } } },
    handle: (deps, { tenant, params }) => rotateChannelSigningSecret(deps, tenant, params.id!),
  }),
];
