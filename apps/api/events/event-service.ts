import { GoneError, NotFoundError } from '../../../libs/errors/errors.js';
import { openStoredPayload } from '../../../libs/payload/stored-payload.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import type { ApiDeps, Tenant } from '../api-deps.js';
import {
  deleteEventRow,
  selectAttempts,
  selectDeliveries,
  selectEvent,
  selectEventPage,
  selectPayload,
  type EventFilter,
  type EventRecord,
} from './event-queries.js';
import { deliveryView, eventSummary, eventView, timelineView } from './event-view.js';
import { payloadBytes, payloadValue } from './payload-view.js';

export async function requireEvent(deps: Pick<ApiDeps, 'store'>, tenant: Tenant, id: string): Promise<EventRecord> {
  const row = await selectEvent(deps.store.sql, tenant.org.id, id);
  if (!row) throw new NotFoundError(`Event ${id} not found`);
  return row;
}

export const payloadExpired = (id: string) =>
  new GoneError('PAYLOAD_EXPIRED', `The payload of event ${id} was deleted under the retention policy`);

/** The body as received (opened when sealed); null once retention removed it. */
export async function receivedBody(deps: Pick<ApiDeps, 'store' | 'secrets'>, event: EventRecord): Promise<Buffer | null> {
  if (event.payloadExpiredAt !== null) return null;
  const stored = await selectPayload(deps.store.sql, event.id);
  return stored === null ? null : openStoredPayload(stored, Boolean(event.payloadSealed), deps.secrets);
}

const maskFieldsOf = (event: EventRecord) => JSON.parse(event.maskFields) as string[];

export async function listEvents(deps: ApiDeps, tenant: Tenant, query: PageQuery & EventFilter) {
  const page = await selectEventPage(deps.store.sql, tenant.org.id, query, query);
  return { rows: page.rows.map(eventSummary), total: page.total };
}

export async function getEvent(deps: ApiDeps, tenant: Tenant, id: string, include: { payload?: boolean; deliveries?: boolean }) {
  const event = await requireEvent(deps, tenant, id);
  const [body, deliveries] = await Promise.all([
    include.payload ? receivedBody(deps, event) : undefined,
    include.deliveries ? selectDeliveries(deps.store.sql, event.id) : undefined,
  ]);
  const payload = body === undefined ? undefined : body === null ? null : payloadValue(body, event.contentType, maskFieldsOf(event));
  return eventView(event, { payload, deliveries });
}

/** The payload as received, with its content type; masked fields show `****`. */
export async function getEventPayload(deps: ApiDeps, tenant: Tenant, id: string): Promise<{ body: Buffer; contentType: string }> {
  const event = await requireEvent(deps, tenant, id);
  const body = await receivedBody(deps, event);
  if (body === null) throw payloadExpired(id);
  return { body: payloadBytes(body, event.contentType, maskFieldsOf(event)), contentType: event.contentType ?? 'application/octet-stream' };
}

export async function listEventDeliveries(deps: ApiDeps, tenant: Tenant, id: string, status?: string) {
  const event = await requireEvent(deps, tenant, id);
  return { data: (await selectDeliveries(deps.store.sql, event.id, status)).map(deliveryView) };
}

export async function getEventTimeline(deps: ApiDeps, tenant: Tenant, id: string) {
  const event = await requireEvent(deps, tenant, id);
  const [deliveries, attempts] = await Promise.all([selectDeliveries(deps.store.sql, event.id), selectAttempts(deps.store.sql, event.id)]);
  return timelineView(event, deliveries, attempts);
}

/** Deletes the event with its deliveries, attempts and stored payload. */
export async function deleteEvent(deps: ApiDeps, tenant: Tenant, id: string): Promise<void> {
  if (!(await deleteEventRow(deps.store.sql, tenant.org.id, id))) throw new NotFoundError(`Event ${id} not found`);
}
