import { NotFoundError, UnavailableError, ValidationError } from '../../../libs/errors/errors.js';
import type { OutgoingMessage } from '../../../libs/broker/broker.js';
import { firstAttemptJob, withLane } from '../../../libs/pipeline/delivery-job.js';
import { firstAttemptMessage } from '../../../libs/pipeline/first-attempt.js';
import { planRoutes, type PlannedTarget, type RoutePlan } from '../../../libs/transformations/route-transformations.js';
import type { SqlClient } from '../../../libs/store/sql-client.js';
import { createReplayDeliveries, createTransformationFailures, removeUnqueuedDeliveries } from '../../../libs/ledger/deliveries.js';
import type { JobTarget, RoutedTarget } from '../../../libs/routing/route-targets.js';
import { destinationTargets } from '../../../libs/destinations/destination-queries.js';
import { sourceSlugs } from '../../../libs/sources/source-queries.js';
import { FieldBudget } from '../../../libs/payload/field-budget.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import { selectEvents, type EventRecord } from '../../../libs/ledger/event-queries.js';
import { openedBody, payloadExpired, requireEvent, storedBody, storedEventDocument } from './event-service.js';

/** What replaying needs of the API's dependencies. */
/** `transformations` may be absent where no route has one. */
export type ReplayDeps = Pick<ApiDeps, 'store' | 'secrets' | 'now' | 'publish' | 'routesFor' | 'lanes' | 'maxRoutesPerSource'> & Partial<Pick<ApiDeps, 'transformations'>>;

/**
 * An event ready to go out again: its body as stored (a sealed body stays sealed in the log), the
 * destinations it goes to (through their routes' transformations), and those whose transformation failed.
 */
interface Replay {
  event: EventRecord;
  body: { bytes: Buffer; sealed: boolean };
  targets: PlannedTarget[];
  failed: RoutePlan['failed'];
}

interface CreatedDelivery {
  id: string;
  replay: Replay;
  target: PlannedTarget;
}

export type SkipReason = 'not_found' | 'payload_expired' | 'no_destinations';

/** Bulk replays look events up this many at a time, and hold this many payloads at a time. */
const LOOKUP_CHUNK = 200;
const PAYLOAD_CHUNK = 20;

/**
 * The organization's destinations with these ids, in the given order; any other id is 404. An event is
 * replayed to at most as many destinations at once as its source may have routes (RELAY_MAX_ROUTES_PER_SOURCE):
 * more is 400, so no replay fans one event out further than routing would.
 */
export async function namedTargets(deps: Pick<ReplayDeps, 'store' | 'maxRoutesPerSource'>, tenant: Tenant, ids: string[]): Promise<JobTarget[]> {
  const unique = [...new Set(ids)];
  if (unique.length > deps.maxRoutesPerSource) {
    const bound = `at most ${deps.maxRoutesPerSource} destinations per event (RELAY_MAX_ROUTES_PER_SOURCE); ${unique.length} were named`;
    throw new ValidationError(`destinationIds: ${bound}`, [{ field: 'destinationIds', message: bound }]);
  }
  const byId = new Map((await destinationTargets(deps.store.sql, tenant.org.id, unique)).map((target) => [target.destinationId, target]));
  const missing = unique.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new NotFoundError(`Destination ${missing.join(', ')} not found`);
  return unique.map((id) => byId.get(id)!);
}

/** New pending deliveries, and their events back to pending. */
async function createDeliveries(sql: SqlClient, orgId: string, replays: Replay[], now: number): Promise<CreatedDelivery[]> {
  const created = await createReplayDeliveries(
    sql,
    replays.map((replay) => ({ orgId, eventId: replay.event.id, targets: replay.targets })),
    now,
  );
  return replays.flatMap((replay, index) => created[index]!.map(({ id }, target) => ({ id, replay, target: replay.targets[target]! })));
}

function deliveryJob(deps: ReplayDeps, orgId: string, delivery: CreatedDelivery, slugs: Map<string, string>): { topic: string; message: OutgoingMessage } {
  const { lanes, secrets } = deps;
  const now = deps.now();
  const { event, body } = delivery.replay;
  const job = firstAttemptJob(
    {
      eventId: event.id,
      orgId,
      sourceId: event.sourceId,
      sourceSlug: slugs.get(event.sourceId),
      contentType: event.contentType,
      providerHeaders: JSON.parse(event.headers),
      signatureValid: Boolean(event.signatureValid),
      receivedAt: event.receivedAt,
      sealed: body.sealed,
    },
    { id: delivery.id, destinationId: delivery.target.destinationId },
  );
  const { target } = delivery;
  return firstAttemptMessage(withLane(job, lanes, target.destinationOrdered), body.bytes, { transformationId: target.report?.id, transformed: target.transformed, delaySeconds: target.delaySeconds }, now, secrets);
}

/**
 * Publishes one job per new delivery. Deliveries whose topic did not take its jobs are removed again and
 * their events' status recomputed, so nothing waits for a job that was never queued; then 503.
 */
async function publishJobs(deps: ReplayDeps, orgId: string, deliveries: CreatedDelivery[], slugs: Map<string, string>): Promise<void> {
  const byTopic = new Map<string, { deliveries: CreatedDelivery[]; messages: OutgoingMessage[] }>();
  for (const delivery of deliveries) {
    const { topic, message } = deliveryJob(deps, orgId, delivery, slugs);
    const list = byTopic.get(topic);
    if (list) {
      list.deliveries.push(delivery);
      list.messages.push(message);
    } else byTopic.set(topic, { deliveries: [delivery], messages: [message] });
  }
  const topics = [...byTopic];
  const results = await Promise.allSettled(topics.map(([topic, { messages }]) => deps.publish(topic, messages)));
  const unqueued = topics.flatMap(([, list], index) => (results[index]!.status === 'rejected' ? list.deliveries : []));
  if (unqueued.length === 0) return;
  await removeUnqueuedDeliveries(deps.store.sql, unqueued.map((d) => ({ id: d.id, eventId: d.replay.event.id })));
  const cause = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
  throw new UnavailableError(`${unqueued.length} of ${deliveries.length} deliveries could not be queued; try again`, cause);
}

async function queueReplays(deps: ReplayDeps, tenant: Tenant, replays: Replay[]): Promise<number> {
  const slugs = await sourceSlugs(deps.store.sql, tenant.org.id, replays.map((replay) => replay.event.sourceId));
  const failures = replays.flatMap(({ event, failed }) => failed.map((target) => ({ ...target, orgId: tenant.org.id, eventId: event.id })));
  await deps.store.sql.transaction((tx) => createTransformationFailures(tx, failures, deps.now()));
  const deliveries = await createDeliveries(deps.store.sql, tenant.org.id, replays.filter((replay) => replay.targets.length > 0), deps.now());
  await publishJobs(deps, tenant.org.id, deliveries, slugs);
  return deliveries.length + failures.length;
}

/**
 * The named destinations, or those the event's source is routed to now whose filters take it; each
 * through the current transformation of the route from the event's source to it, if there is one.
 */
async function targetsFor(deps: ReplayDeps, event: EventRecord, body: Replay['body'], named: JobTarget[] | undefined): Promise<Pick<Replay, 'targets' | 'failed'>> {
  const routes = await deps.routesFor(event.sourceId);
  const targets = named ? named.map((target) => namedRoute(routes, target)) : routes;
  const plan = await planRoutes(targets, {
    document: () => storedEventDocument(event, openedBody(deps, event, body)),
    contentType: event.contentType,
    context: { eventId: event.id, sourceId: event.sourceId, receivedAt: new Date(event.receivedAt).toISOString() },
  }, deps.transformations, new FieldBudget());
  return { targets: plan.targets, failed: plan.failed };
}

/** A named destination goes through its route's transformation, not its filter (naming it chose it). */
function namedRoute(routes: RoutedTarget[], target: JobTarget): RoutedTarget {
  const route = routes.find((candidate) => candidate.destinationId === target.destinationId);
  return { routeId: route?.routeId ?? '', transformation: route?.transformation ?? null, delaySeconds: route?.delaySeconds ?? 0, ...target, filter: null };
}

/** Sends one event again to the named destinations, or to those its source is routed to now. */
export async function replayEvent(deps: ReplayDeps, tenant: Tenant, id: string, destinationIds?: string[]) {
  const event = await requireEvent(deps, tenant, id);
  const named = destinationIds ? await namedTargets(deps, tenant, destinationIds) : undefined;
  const body = await storedBody(deps, event);
  if (body === null) throw payloadExpired(id);
  const planned = await targetsFor(deps, event, body, named);
  const created = planned.targets.length + planned.failed.length === 0 ? 0 : await queueReplays(deps, tenant, [{ event, body, ...planned }]);
  return { message: `Event ${id} queued for replay to ${created} destination(s)`, deliveriesCreated: created };
}

/**
 * Deliveries one bulk replay may create (events × destinations): each may take up to 21 attempts, so an
 * unbounded call could multiply one request into millions of requests. Replay by query paces itself.
 */
export const MAX_BULK_REPLAY_DELIVERIES = 10_000;

/** How many deliveries replaying these events would create: found events times their destinations. */
async function plannedDeliveries(deps: ReplayDeps, tenant: Tenant, ids: string[], named: JobTarget[] | undefined): Promise<number> {
  const perSource = new Map<string, number>();
  let planned = 0;
  for (let start = 0; start < ids.length; start += LOOKUP_CHUNK) {
    for (const event of (await selectEvents(deps.store.sql, tenant.org.id, ids.slice(start, start + LOOKUP_CHUNK))).values()) {
      let count = named?.length ?? perSource.get(event.sourceId);
      if (count === undefined) {
        count = (await deps.routesFor(event.sourceId)).length;
        perSource.set(event.sourceId, count);
      }
      planned += count;
    }
  }
  return planned;
}

/** Replays many events; unknown and expired ones (and those with nowhere to go) are skipped and listed. */
export async function replayEvents(deps: ReplayDeps, tenant: Tenant, eventIds: string[], destinationIds?: string[]) {
  const named = destinationIds ? await namedTargets(deps, tenant, destinationIds) : undefined;
  const ids = [...new Set(eventIds)];
  const planned = await plannedDeliveries(deps, tenant, ids, named);
  if (planned > MAX_BULK_REPLAY_DELIVERIES) {
    throw new ValidationError(
      `This replay would create ${planned} deliveries; one bulk replay creates at most ${MAX_BULK_REPLAY_DELIVERIES} (events × destinations). ` +
        'Replay fewer events or destinations per call, or use POST /api/replays (replay by query), which paces itself.',
      [{ field: 'eventIds', message: `at most ${MAX_BULK_REPLAY_DELIVERIES} deliveries (events × destinations) per call; this would create ${planned}` }],
    );
  }
  const skipped: { eventId: string; reason: SkipReason }[] = [];
  let eventsQueued = 0;
  let deliveriesCreated = 0;
  for (let start = 0; start < ids.length; start += LOOKUP_CHUNK) {
    const chunk = ids.slice(start, start + LOOKUP_CHUNK);
    const found = await selectEvents(deps.store.sql, tenant.org.id, chunk);
    for (let from = 0; from < chunk.length; from += PAYLOAD_CHUNK) {
      const replays: Replay[] = [];
      for (const eventId of chunk.slice(from, from + PAYLOAD_CHUNK)) {
        const event = found.get(eventId);
        const body = event && (await storedBody(deps, event));
        const planned = event && body ? await targetsFor(deps, event, body, named) : { targets: [], failed: [] };
        if (!event) skipped.push({ eventId, reason: 'not_found' });
        else if (!body) skipped.push({ eventId, reason: 'payload_expired' });
        else if (planned.targets.length + planned.failed.length === 0) skipped.push({ eventId, reason: 'no_destinations' });
        else replays.push({ event, body, ...planned });
      }
      if (replays.length === 0) continue;
      deliveriesCreated += await queueReplays(deps, tenant, replays);
      eventsQueued += replays.length;
    }
  }
  return { message: `${eventsQueued} event(s) queued for replay`, eventsQueued, deliveriesCreated, skipped };
}
