import { z } from 'zod';
import { defineOperation, type ApiOperation } from '../api-operation.js';
import { EXAMPLE_TIME, timestamp } from '../openapi/shared-schemas.js';
import { replayEvent, replayEvents } from './event-replay.js';
import { isInertPayloadType } from './payload-view.js';
import { jsonWithRaw } from '../../../libs/http/raw-json.js';
import { bulkReplayBody, DELIVERY_STATUSES, EVENT_STATUSES, eventDeliveriesQuery, getEventQuery, listEventsQuery, replayBody } from './event-schema.js';
import { deleteEvent, getEvent, getEventPayload, getEventTimeline, listEventDeliveries, listEvents } from './event-service.js';

const EVENT_ID = 'evt_01JDQ5A1B3C5D7E9F1G3H5J7K9';
const DELIVERY_ID = 'dlv_01JDQ5A1C2D4F6H8J0K2M4N6P8';
const DESTINATION_ID = 'dst_01JDQ4ZB2C4E6G8J0K2M4P6R8T';
const SOURCE_ID = 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7';

const headersSchema = z.record(z.string(), z.union([z.string(), z.array(z.string())])).meta({ description: 'The headers received, names in lowercase' });

const eventSummarySchema = z
  .object({
    id: z.string(),
    sourceId: z.string(),
    status: z.enum(EVENT_STATUSES),
    headers: headersSchema,
    payloadSize: z.number().int(),
    deliveriesCount: z.number().int(),
    deliveriesSucceeded: z.number().int(),
    receivedAt: timestamp,
  })
  .meta({ id: 'EventSummary' });

const deliverySchema = z
  .object({
    id: z.string(),
    destinationId: z.string(),
    destinationName: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.number().int(),
    latency: z.number().nullable(),
    statusCode: z.number().int().nullable(),
    error: z.string().optional(),
    failureReason: z.enum(['transformation_failed']).optional().meta({ description: 'Why the delivery failed without an attempt' }),
    transformation: z
      .object({ id: z.string(), error: z.object({ name: z.string(), message: z.string() }).nullable(), logs: z.array(z.string()) })
      .optional()
      .meta({ description: "The route's transformation: its error, if it failed, and its console lines" }),
    deliveredAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: 'Delivery' });

const eventSchema = z
  .object({
    id: z.string(),
    sourceId: z.string(),
    source: z.object({ id: z.string(), name: z.string() }),
    status: z.enum(EVENT_STATUSES),
    headers: headersSchema,
    contentType: z.string().nullable(),
    payload: z.unknown().optional().meta({ description: 'With includePayload: JSON and form bodies as values, other text as a string, binary as base64; null once expired' }),
    payloadEncoding: z.literal('base64').optional(),
    payloadExpired: z.boolean().optional(),
    payloadSize: z.number().int(),
    payloadHash: z.string(),
    signatureValid: z.boolean(),
    deliveriesCount: z.number().int(),
    deliveriesSucceeded: z.number().int(),
    deliveriesFailed: z.number().int(),
    failureReason: z.string().nullable().meta({ description: 'Why the event failed without a delivery attempt (e.g. a record no consumer could read); null otherwise' }),
    filteredRouteIds: z.array(z.string()).meta({ description: 'Routes whose filter rejected this event (no delivery was made for them)' }),
    traceId: z.string().nullable().meta({ description: "The webhook's W3C trace id (the sender's own when it sent a traceparent); null for events stored before traces" }),
    deliveries: z.array(deliverySchema).optional(),
    receivedAt: timestamp,
    createdAt: timestamp,
  })
  .meta({ id: 'Event' });

const timelineSchema = z
  .object({
    eventId: z.string(),
    received: timestamp,
    validated: timestamp,
    queued: timestamp,
    deliveries: z.array(
      z.object({
        deliveryId: z.string(),
        destinationId: z.string(),
        destinationName: z.string(),
        status: z.enum(DELIVERY_STATUSES),
        attempts: z.array(
          z.object({
            attemptNumber: z.number().int(),
            startedAt: timestamp,
            completedAt: timestamp,
            status: z.enum(['success', 'failed']),
            statusCode: z.number().int().nullable(),
            latency: z.number(),
            error: z.string().optional(),
          }),
        ),
      }),
    ),
    totalDuration: z.number(),
  })
  .meta({ id: 'EventTimeline' });

const replaySchema = z.object({ message: z.string(), deliveriesCreated: z.number().int() }).meta({ id: 'ReplayResult' });
const bulkReplaySchema = z
  .object({
    message: z.string(),
    eventsQueued: z.number().int(),
    deliveriesCreated: z.number().int(),
    skipped: z.array(z.object({ eventId: z.string(), reason: z.enum(['not_found', 'payload_expired', 'no_destinations']) })),
  })
  .meta({ id: 'BulkReplayResult' });

const headersExample = { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=4f1c...' };
const deliveryExample: z.input<typeof deliverySchema> = {
  id: DELIVERY_ID,
  destinationId: DESTINATION_ID,
  destinationName: 'Orders service',
  status: 'delivered',
  attemptCount: 1,
  latency: 84,
  statusCode: 200,
  deliveredAt: EXAMPLE_TIME,
  createdAt: EXAMPLE_TIME,
};

export const eventOperations: ApiOperation[] = [
  defineOperation({
    method: 'get',
    path: '/api/events',
    operationId: 'listEvents',
    tag: 'Events',
    summary: 'List events, newest first, with filters and payload search',
    scope: 'read',
    query: listEventsQuery,
    responses: {
      200: {
        description: 'A page of event summaries',
        body: {
          schema: z
            .object({
              data: z.array(eventSummarySchema),
              pagination: z.object({
                total: z.number().int().min(0),
                page: z.number().int().min(1),
                pageSize: z.number().int().min(1).max(100),
                totalExact: z.boolean().meta({ description: 'false when `total` is a lower bound (docs/decisions/0031-event-counts-and-list-totals.md)' }),
                searchedBackTo: timestamp.optional().meta({ description: 'When a search stopped at its bound before filling the page: how far back it looked' }),
              }),
            })
            .meta({ id: 'EventPage' }),
          example: {
            data: [
              {
                id: EVENT_ID,
                sourceId: SOURCE_ID,
                status: 'delivered',
                headers: headersExample,
                payloadSize: 5120,
                deliveriesCount: 1,
                deliveriesSucceeded: 1,
                receivedAt: EXAMPLE_TIME,
              },
            ],
            pagination: { total: 1, page: 1, pageSize: 20, totalExact: true },
          },
        },
      },
    },
    handle: (deps, { tenant, query }) => listEvents(deps, tenant, query),
  }),
  // Before `{id}/replay`, which would take `bulk` for an event id.
  defineOperation({
    method: 'post',
    path: '/api/events/bulk/replay',
    operationId: 'replayEvents',
    tag: 'Events',
    summary: 'Replay many events; unknown, expired and unrouted ones are skipped and listed',
    scope: 'write',
    body: { schema: bulkReplayBody, required: true, example: { eventIds: [EVENT_ID, 'evt_01JDQ5A1B3C5D7E9F1G3H5J7KA'] } },
    responses: {
      202: {
        description: 'The replays were queued',
        body: {
          schema: bulkReplaySchema,
          example: { message: '1 event(s) queued for replay', eventsQueued: 1, deliveriesCreated: 1, skipped: [{ eventId: 'evt_01JDQ5A1B3C5D7E9F1G3H5J7KA', reason: 'payload_expired' }] },
        },
      },
    },
    // A named destination that is unknown or another organization's.
    errors: [404],
    handle: (deps, { tenant, body }) => replayEvents(deps, tenant, body.eventIds, body.destinationIds),
  }),
  defineOperation({
    method: 'get',
    path: '/api/events/{id}',
    operationId: 'getEvent',
    tag: 'Events',
    summary: 'Get an event, optionally with its payload and deliveries',
    scope: 'read',
    query: getEventQuery,
    responses: {
      200: {
        description: 'The event',
        body: {
          schema: eventSchema,
          example: {
            id: EVENT_ID,
            sourceId: SOURCE_ID,
            source: { id: SOURCE_ID, name: 'GitHub' },
            status: 'delivered',
            headers: headersExample,
            contentType: 'application/json',
            payload: { ref: 'refs/heads/main', sender: { login: 'octocat', email: '****' } },
            payloadExpired: false,
            payloadSize: 5120,
            payloadHash: 'sha256:9b74c9897bac770ffc029102a200c5de0f7e0e8b8a8c4a1d4e8b1e0a5c0b1d2e',
            signatureValid: true,
            deliveriesCount: 1,
            deliveriesSucceeded: 1,
            deliveriesFailed: 0,
            failureReason: null,
            filteredRouteIds: [],
            traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
            deliveries: [deliveryExample],
            receivedAt: EXAMPLE_TIME,
            createdAt: EXAMPLE_TIME,
          },
        },
      },
    },
    // includePayload on a stored payload that cannot be opened: 409 PAYLOAD_UNREADABLE.
    errors: [409],
    handle: async (deps, { ctx, tenant, params, query }) => {
      const event = await getEvent(deps, tenant, params.id!, { payload: query.includePayload, deliveries: query.includeDeliveries });
      // A large payload comes serialized from the payload view thread; it is spliced in, not parsed again.
      ctx.type = 'application/json';
      return jsonWithRaw(event);
    },
  }),
  defineOperation({
    method: 'get',
    path: '/api/events/{id}/payload',
    operationId: 'getEventPayload',
    tag: 'Events',
    summary: 'The payload as received, with its Content-Type (masked fields show ****)',
    scope: 'read',
    responses: {
      200: {
        description: 'The payload bytes, with the Content-Type the provider sent',
        headers: {
          'X-Content-Type-Options': 'Always `nosniff`',
          'Content-Disposition': '`attachment` for types a browser could render or run (anything but JSON, form, plain text and binary)',
        },
        content: {
          'application/json': { schema: z.unknown(), example: { ref: 'refs/heads/main' } },
          'application/x-www-form-urlencoded': { schema: z.string(), example: 'CallSid=CA123&From=%2B15550100' },
          'text/plain': { schema: z.string(), example: 'hello' },
          // Any other type is answered as the provider sent it (as an attachment where a browser could render it).
          '*/*': { schema: z.string().meta({ format: 'binary' }), example: '<order id="1001"/>' },
        },
      },
    },
    errors: [409, 410],
    handle: async (deps, { ctx, tenant, params }) => {
      const payload = await getEventPayload(deps, tenant, params.id!);
      ctx.body = payload.body;
      // Set as stored: `ctx.type` would append a charset the provider did not send.
      ctx.set('Content-Type', payload.contentType);
      // The sender chose the type: a browser must neither guess another nor render one it would run.
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (!isInertPayloadType(payload.contentType)) ctx.set('Content-Disposition', `attachment; filename="${params.id}"`);
    },
  }),
  defineOperation({
    method: 'get',
    path: '/api/events/{id}/deliveries',
    operationId: 'listEventDeliveries',
    tag: 'Events',
    summary: "The event's deliveries",
    scope: 'read',
    query: eventDeliveriesQuery,
    responses: {
      200: {
        description: 'Every delivery of the event, oldest first',
        body: { schema: z.object({ data: z.array(deliverySchema) }).meta({ id: 'DeliveryList' }), example: { data: [deliveryExample] } },
      },
    },
    handle: (deps, { tenant, params, query }) => listEventDeliveries(deps, tenant, params.id!, query.status),
  }),
  defineOperation({
    method: 'get',
    path: '/api/events/{id}/timeline',
    operationId: 'getEventTimeline',
    tag: 'Events',
    summary: "The event's path through the relay, every attempt included",
    scope: 'read',
    responses: {
      200: {
        description: 'The timeline (SPEC 2.7)',
        body: {
          schema: timelineSchema,
          example: {
            eventId: EVENT_ID,
            received: '2026-11-23T18:00:00.000Z',
            validated: '2026-11-23T18:00:00.002Z',
            queued: '2026-11-23T18:00:00.004Z',
            deliveries: [
              {
                deliveryId: DELIVERY_ID,
                destinationId: DESTINATION_ID,
                destinationName: 'Orders service',
                status: 'delivered',
                attempts: [{ attemptNumber: 1, startedAt: '2026-11-23T18:00:00.010Z', completedAt: '2026-11-23T18:00:00.094Z', status: 'success', statusCode: 200, latency: 84 }],
              },
            ],
            totalDuration: 94,
          },
        },
      },
    },
    handle: (deps, { tenant, params }) => getEventTimeline(deps, tenant, params.id!),
  }),
  defineOperation({
    method: 'post',
    path: '/api/events/{id}/replay',
    operationId: 'replayEvent',
    tag: 'Events',
    summary: 'Send an event again, to the named destinations or to those its source is routed to now',
    scope: 'write',
    body: { schema: replayBody, required: false, example: { destinationIds: [DESTINATION_ID] } },
    responses: {
      202: {
        description: 'The replay was queued',
        body: { schema: replaySchema, example: { message: `Event ${EVENT_ID} queued for replay to 1 destination(s)`, deliveriesCreated: 1 } },
      },
    },
    errors: [410],
    handle: (deps, { tenant, params, body }) => replayEvent(deps, tenant, params.id!, body.destinationIds),
  }),
  defineOperation({
    method: 'delete',
    path: '/api/events/{id}',
    operationId: 'deleteEvent',
    tag: 'Events',
    summary: 'Delete an event, its deliveries and its stored payload',
    scope: 'write',
    responses: { 204: { description: 'Deleted' } },
    handle: (deps, { tenant, params }) => deleteEvent(deps, tenant, params.id!),
  }),
];
