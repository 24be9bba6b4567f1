import { filterDocument } from '../../../libs/filters/filter-document.js';
import type { FilterDocument } from '../../../libs/filters/route-filter.js';
import { ConflictError, GoneError, NotFoundError } from '../../../libs/errors/errors.js';
import { pageEnvelope } from '../../../libs/http/validate.js';
import { DecryptionError } from '../../../libs/secrets/secret-errors.js';
import { openStoredPayload } from '../../../libs/payload/stored-payload.js';
import type { PageQuery } from '../../../libs/store/org-scoped-repository.js';
import type { Tenant } from '../../../libs/tenancy/tenant.js';
import type { ApiDeps } from '../api-deps.js';
import {
  deleteEventRow,
  selectAttempts,
  selectDeliveries,
  selectEvent,
  selectEventPage,
  selectPayload,
  type EventFilter,
  type EventRecord,
} from '../../../libs/ledger/event-queries.js';
import { isoTime } from '../../../libs/time/iso-time.js';
import { signatureHeadersOf } from '../../../libs/sources/source-queries.js';
import { deliveryView, eventSummary, eventView, timelineView } from './event-view.js';

export async function requireEvent(deps: Pick<ApiDeps, 'store'>, tenant: Tenant, id: string): Promise<EventRecord> {
  const row = await selectEvent(deps.store.sql, tenant.org.id, id);
  if (!row) throw new NotFoundError(`Event ${id} not found`);
  return row;
}

export const payloadExpired = (id: string) =>
  new GoneError('PAYLOAD_EXPIRED', `The payload of event ${id} was deleted under the retention policy`);

/** The body as stored, still sealed if it is (what a replay puts in the log); null once retention removed it. */
export async function storedBody(deps: Pick<ApiDeps, 'store'>, event: EventRecord): Promise<{ bytes: Buffer; sealed: boolean } | null> {
  if (event.payloadExpiredAt !== null) return null;
  const stored = await selectPayload(deps.store.sql, event.id);
  return stored === null ? null : { bytes: stored, sealed: Boolean(event.payloadSealed) };
}

/**
 * The body as received (opened when sealed); null once retention removed it. A sealed body that does not
 * open (its record was tampered with or sealed under another key; the event is `failed` with the reason)
 * is `409 PAYLOAD_UNREADABLE`: the request is fine, the stored payload is not.
 */
export async function receivedBody(deps: Pick<ApiDeps, 'store' | 'secrets'>, event: EventRecord): Promise<Buffer | null> {
  const stored = await storedBody(deps, event);
  return stored === null ? null : openedBody(deps, event, stored);
}

/** A stored body opened (as `receivedBody`): `409 PAYLOAD_UNREADABLE` when it does not open. */
export function openedBody(deps: Pick<ApiDeps, 'secrets'>, event: EventRecord, stored: { bytes: Buffer; sealed: boolean }): Buffer {
  try {
    return openStoredPayload(stored.bytes, stored.sealed, deps.secrets);
  } catch (error) {
    if (!(error instanceof DecryptionError)) throw error;
    throw new ConflictError('PAYLOAD_UNREADABLE', `The payload of event ${event.id} cannot be opened with this relay's encryption key`);
  }
}

/** What route filters match of a stored event (its body as received, decrypted). */
/** The stored body as every view shows it: opened, with masked fields as `****`. */
export function shownBody(deps: Pick<ApiDeps, 'secrets' | 'payloadViews'>, event: EventRecord, stored: { bytes: Buffer; sealed: boolean }): Promise<Buffer> {
  return deps.payloadViews.bytes(openedBody(deps, event, stored), event.contentType, maskFieldsOf(event));
}

export function storedEventDocument(event: EventRecord, body: Buffer): FilterDocument {
  return filterDocument({
    body,
    contentType: event.contentType,
    headers: JSON.parse(event.headers) as Record<string, string | string[]>,
    query: event.ingestQuery === null ? null : (JSON.parse(event.ingestQuery) as Record<string, string | string[]>),
    path: event.ingestPath,
  });
}

const maskFieldsOf = (event: EventRecord) => JSON.parse(event.maskFields) as string[];

/**
 * A page of events with SPEC's pagination, plus `totalExact` (false when `total` is a lower bound) and,
 * when a search stopped at its bound before filling the page, `searchedBackTo` (docs/decisions/0032-bounded-search.md).
 */
export async function listEvents(deps: ApiDeps, tenant: Tenant, query: PageQuery & EventFilter) {
  const page = await selectEventPage(deps.store.sql, tenant.org.id, query, query);
  const signatureHeaders = await signatureHeadersOf(deps.store.sql, page.rows.map((row) => row.sourceId));
  const envelope = pageEnvelope(
    page.rows.map((row) => eventSummary(row, signatureHeaders.get(row.sourceId) ?? null)),
    page.total,
    query,
  );
  return {
    ...envelope,
    pagination: {
      ...envelope.pagination,
      totalExact: page.totalExact,
      ...(page.searchedBackTo === undefined ? {} : { searchedBackTo: isoTime(page.searchedBackTo) }),
    },
  };
}

export async function getEvent(deps: ApiDeps, tenant: Tenant, id: string, include: { payload?: boolean; deliveries?: boolean }) {
  const event = await requireEvent(deps, tenant, id);
  const [body, deliveries, signatureHeaders] = await Promise.all([
    include.payload ? receivedBody(deps, event) : undefined,
    include.deliveries ? selectDeliveries(deps.store.sql, event.id) : undefined,
    signatureHeadersOf(deps.store.sql, [event.sourceId]),
  ]);
  const payload = body === undefined ? undefined : body === null ? null : await deps.payloadViews.value(body, event.contentType, maskFieldsOf(event));
  return eventView(event, signatureHeaders.get(event.sourceId) ?? null, { payload, deliveries });
}

/** The payload as received, with its content type; masked fields show `****`. */
export async function getEventPayload(deps: ApiDeps, tenant: Tenant, id: string): Promise<{ body: Buffer; contentType: string }> {
  const event = await requireEvent(deps, tenant, id);
  const body = await receivedBody(deps, event);
  if (body === null) throw payloadExpired(id);
  return { body: await deps.payloadViews.bytes(body, event.contentType, maskFieldsOf(event)), contentType: event.contentType ?? 'application/octet-stream' };
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
