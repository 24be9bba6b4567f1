import { isoTime } from '../../../libs/time/iso-time.js';
import { storedHeadersView } from './header-view.js';
import type { AttemptRecordRow, DeliveryRecord, EventRecord, EventSummaryRecord } from '../../../libs/ledger/event-queries.js';

/**
 * SPEC 2.4 list item: id, sourceId, status, headers, payloadSize, deliveriesCount, deliveriesSucceeded, receivedAt.
 * `signatureHeader`: the source's, masked with the credentials (see storedHeadersView).
 */
export function eventSummary(row: EventSummaryRecord, signatureHeader: string | null) {
  return {
    id: row.id,
    sourceId: row.sourceId,
    status: row.status,
    headers: storedHeadersView(row.headers, signatureHeader),
    payloadSize: row.payloadSize,
    deliveriesCount: row.deliveriesCount,
    deliveriesSucceeded: row.deliveriesSucceeded,
    receivedAt: isoTime(row.receivedAt),
  };
}

/** SPEC 2.5: `error` is present on failure only. */
export function deliveryView(row: DeliveryRecord) {
  return {
    id: row.id,
    destinationId: row.destinationId,
    destinationName: row.destinationName,
    status: row.status,
    attemptCount: row.attemptCount,
    latency: row.latencyMs,
    statusCode: row.statusCode,
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.failureReason === null ? {} : { failureReason: row.failureReason }),
    ...(row.transformation === null ? {} : { transformation: JSON.parse(row.transformation) as unknown }),
    deliveredAt: isoTime(row.deliveredAt),
    createdAt: isoTime(row.createdAt),
  };
}

export interface EventViewExtras {
  /** With `includePayload`: the payload view, or null once it expired. */
  payload?: { payload: unknown; payloadEncoding?: 'base64' } | null;
  deliveries?: DeliveryRecord[];
}

/** SPEC 2.4: the full event; `payload` and `deliveries` only when asked for. */
export function eventView(row: EventRecord, signatureHeader: string | null, extras: EventViewExtras = {}) {
  return {
    id: row.id,
    sourceId: row.sourceId,
    source: { id: row.sourceId, name: row.sourceName },
    status: row.status,
    headers: storedHeadersView(row.headers, signatureHeader),
    contentType: row.contentType,
    ...(extras.payload === undefined ? {} : extras.payload === null ? { payload: null, payloadExpired: true } : { ...extras.payload, payloadExpired: false }),
    payloadSize: row.payloadSize,
    payloadHash: row.payloadHash,
    signatureValid: Boolean(row.signatureValid),
    deliveriesCount: row.deliveriesCount,
    deliveriesSucceeded: row.deliveriesSucceeded,
    deliveriesFailed: row.deliveriesFailed,
    failureReason: row.failureReason,
    filteredRouteIds: row.filteredRouteIds === null ? [] : (JSON.parse(row.filteredRouteIds) as string[]),
    traceId: row.traceId,
    ...(extras.deliveries === undefined ? {} : { deliveries: extras.deliveries.map(deliveryView) }),
    receivedAt: isoTime(row.receivedAt),
    createdAt: isoTime(row.createdAt),
  };
}

/** SPEC 2.7: the event's path through the relay, each delivery with its attempts, in the order they happened. */
export function timelineView(row: EventRecord, deliveries: DeliveryRecord[], attempts: AttemptRecordRow[]) {
  const byDelivery = new Map<string, AttemptRecordRow[]>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.deliveryId);
    if (list) list.push(attempt);
    else byDelivery.set(attempt.deliveryId, [attempt]);
  }
  const chronological = [...deliveries].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  // From receipt to the last thing that happened to the event: its last attempt, or being queued.
  const lastInstant = attempts.reduce((last, a) => Math.max(last, a.completedAt), row.queuedAt);
  return {
    eventId: row.id,
    received: isoTime(row.receivedAt),
    validated: isoTime(row.validatedAt),
    queued: isoTime(row.queuedAt),
    deliveries: chronological.map((delivery) => ({
      deliveryId: delivery.id,
      destinationId: delivery.destinationId,
      destinationName: delivery.destinationName,
      status: delivery.status,
      attempts: (byDelivery.get(delivery.id) ?? []).map((a) => ({
        attemptNumber: a.attemptNumber,
        startedAt: isoTime(a.startedAt),
        completedAt: isoTime(a.completedAt),
        status: a.ok ? 'success' : 'failed',
        statusCode: a.statusCode,
        latency: a.latencyMs,
        ...(a.error === null ? {} : { error: a.error }),
      })),
    })),
    totalDuration: lastInstant - row.receivedAt,
  };
}
