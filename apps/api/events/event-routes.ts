import Router from '@koa/router';
import { pageEnvelope } from '../../../libs/http/validate.js';
import type { ApiDeps } from '../api-deps.js';
import { parseBody, parseOptionalBody, parseQuery, tenantOf } from '../request-input.js';
import { replayEvent, replayEvents } from './event-replay.js';
import { bulkReplayBody, eventDeliveriesQuery, getEventQuery, listEventsQuery, replayBody } from './event-schema.js';
import { deleteEvent, getEvent, getEventPayload, getEventTimeline, listEventDeliveries, listEvents } from './event-service.js';

export function eventRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/events' });
  router.get('/', async (ctx) => {
    const query = parseQuery(ctx, listEventsQuery);
    const page = await listEvents(deps, tenantOf(ctx), query);
    ctx.body = pageEnvelope(page.rows, page.total, query);
  });
  // Before `/:id/replay`, which would take `bulk` for an event id.
  router.post('/bulk/replay', async (ctx) => {
    const body = parseBody(ctx, bulkReplayBody);
    const result = await replayEvents(deps, tenantOf(ctx), body.eventIds, body.destinationIds);
    ctx.status = 202;
    ctx.body = result;
  });
  router.get('/:id', async (ctx) => {
    const query = parseQuery(ctx, getEventQuery);
    ctx.body = await getEvent(deps, tenantOf(ctx), ctx.params.id, { payload: query.includePayload, deliveries: query.includeDeliveries });
  });
  router.get('/:id/payload', async (ctx) => {
    const payload = await getEventPayload(deps, tenantOf(ctx), ctx.params.id);
    ctx.body = payload.body;
    // Set as stored: `ctx.type` would append a charset the provider did not send.
    ctx.set('Content-Type', payload.contentType);
  });
  router.get('/:id/deliveries', async (ctx) => {
    const query = parseQuery(ctx, eventDeliveriesQuery);
    ctx.body = await listEventDeliveries(deps, tenantOf(ctx), ctx.params.id, query.status);
  });
  router.get('/:id/timeline', async (ctx) => {
    ctx.body = await getEventTimeline(deps, tenantOf(ctx), ctx.params.id);
  });
  router.post('/:id/replay', async (ctx) => {
    const body = parseOptionalBody(ctx, replayBody);
    const result = await replayEvent(deps, tenantOf(ctx), ctx.params.id, body.destinationIds);
    ctx.status = 202;
    ctx.body = result;
  });
  router.delete('/:id', async (ctx) => {
    await deleteEvent(deps, tenantOf(ctx), ctx.params.id);
    ctx.status = 204;
  });
  return router;
}
