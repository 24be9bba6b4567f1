import type { SqlClient } from '../../../libs/store/sql-client.js';

/** Every column of an event but the payload, as the API reads it. */
export interface EventRecord {
  id: string;
  sourceId: string;
  sourceName: string;
  /** The source's maskFields (JSON text), applied to every view of the payload. */
  maskFields: string;
  status: string;
  headers: string;
  contentType: string | null;
  payloadSize: number;
  payloadHash: string;
  payloadSealed: boolean | number;
  payloadExpiredAt: number | null;
  signatureValid: boolean | number;
  receivedAt: number;
  validatedAt: number;
  queuedAt: number;
  createdAt: number;
  deliveriesCount: number;
  deliveriesSucceeded: number;
  deliveriesFailed: number;
}

export interface EventSummaryRecord {
  id: string;
  sourceId: string;
  status: string;
  headers: string;
  payloadSize: number;
  deliveriesCount: number;
  deliveriesSucceeded: number;
  receivedAt: number;
}

export interface DeliveryRecord {
  id: string;
  destinationId: string;
  destinationName: string;
  status: string;
  attemptCount: number;
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
  deliveredAt: number | null;
  createdAt: number;
}

export interface AttemptRecordRow {
  deliveryId: string;
  attemptNumber: number;
  startedAt: number;
  completedAt: number;
  ok: boolean | number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface EventFilter {
  sourceId?: string;
  status?: string;
  /** Inclusive bounds on createdAt, epoch ms. */
  from?: number;
  to?: number;
  search?: string;
  signatureValid?: boolean;
}

const EVENT_COLUMNS = `e.id, e.source_id AS "sourceId", s.name AS "sourceName", s.mask_fields AS "maskFields", e.status, e.headers,
  e.content_type AS "contentType", e.payload_size AS "payloadSize", e.payload_hash AS "payloadHash", e.payload_sealed AS "payloadSealed",
  e.payload_expired_at AS "payloadExpiredAt", e.signature_valid AS "signatureValid", e.received_at AS "receivedAt",
  e.validated_at AS "validatedAt", e.queued_at AS "queuedAt", e.created_at AS "createdAt", e.deliveries_count AS "deliveriesCount",
  e.deliveries_succeeded AS "deliveriesSucceeded", e.deliveries_failed AS "deliveriesFailed"`;

const DELIVERY_COLUMNS = `id, destination_id AS "destinationId", destination_name AS "destinationName", status, attempt_count AS "attemptCount",
  last_status_code AS "statusCode", last_error AS "error", latency_ms AS "latencyMs", delivered_at AS "deliveredAt", created_at AS "createdAt"`;

const sqlBoolean = (sql: SqlClient, value: boolean) => (sql.kind === 'postgres' ? String(value) : value ? '1' : '0');

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Case-insensitive substring search in the payload text. PostgreSQL: ILIKE, by the trigram index when
 * pg_trgm is installed. SQLite: the FTS5 trigram index for terms of 3 characters or more (a phrase of
 * trigrams is a substring); shorter terms have no trigram and are matched by scanning.
 */
function searchCondition(sql: SqlClient, text: string): { condition: string; params: unknown[] } {
  if (sql.kind === 'postgres') return { condition: `e.payload_text ILIKE ? ESCAPE '\\'`, params: [likePattern(text)] };
  if ([...text].length >= 3) {
    return { condition: 'e.rowid IN (SELECT rowid FROM events_search WHERE events_search MATCH ?)', params: [`"${text.replace(/"/g, '""')}"`] };
  }
  return { condition: `LOWER(e.payload_text) LIKE ? ESCAPE '\\'`, params: [likePattern(text.toLowerCase())] };
}

function whereClause(sql: SqlClient, orgId: string, filter: EventFilter): { where: string; params: unknown[] } {
  const conditions = ['e.org_id = ?'];
  const params: unknown[] = [orgId];
  const add = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filter.sourceId !== undefined) add('e.source_id = ?', filter.sourceId);
  if (filter.status !== undefined) add('e.status = ?', filter.status);
  if (filter.from !== undefined) add('e.created_at >= ?', filter.from);
  if (filter.to !== undefined) add('e.created_at <= ?', filter.to);
  // A literal, not a parameter: SQLite uses the partial index of failed verifications only for a literal.
  if (filter.signatureValid !== undefined) add(`e.signature_valid = ${sqlBoolean(sql, filter.signatureValid)}`);
  if (filter.search) {
    const { condition, params: values } = searchCondition(sql, filter.search);
    add(condition, ...values);
  }
  return { where: conditions.join(' AND '), params };
}

/** A page of an organization's events, newest first, and how many match in all. */
export async function selectEventPage(
  sql: SqlClient,
  orgId: string,
  filter: EventFilter,
  page: { page: number; pageSize: number },
): Promise<{ rows: EventSummaryRecord[]; total: number }> {
  const { where, params } = whereClause(sql, orgId, filter);
  const [rows, [count]] = await Promise.all([
    sql.all<EventSummaryRecord>(
      `SELECT e.id, e.source_id AS "sourceId", e.status, e.headers, e.payload_size AS "payloadSize", e.deliveries_count AS "deliveriesCount",
         e.deliveries_succeeded AS "deliveriesSucceeded", e.received_at AS "receivedAt"
       FROM events e WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT ? OFFSET ?`,
      [...params, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    sql.all<{ total: number | string }>(`SELECT COUNT(*) AS total FROM events e WHERE ${where}`, params),
  ]);
  return { rows, total: Number(count?.total ?? 0) };
}

export async function selectEvent(sql: SqlClient, orgId: string, id: string): Promise<EventRecord | null> {
  const [row] = await sql.all<EventRecord>(
    `SELECT ${EVENT_COLUMNS} FROM events e JOIN sources s ON s.id = e.source_id WHERE e.org_id = ? AND e.id = ?`,
    [orgId, id],
  );
  return row ?? null;
}

/** The organization's events with these ids (unknown and foreign ids are missing from the map). */
export async function selectEvents(sql: SqlClient, orgId: string, ids: string[]): Promise<Map<string, EventRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.all<EventRecord>(
    `SELECT ${EVENT_COLUMNS} FROM events e JOIN sources s ON s.id = e.source_id WHERE e.org_id = ? AND e.id IN (${ids.map(() => '?').join(', ')})`,
    [orgId, ...ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** The stored payload bytes; null once retention removed them. */
export async function selectPayload(sql: SqlClient, eventId: string): Promise<Buffer | null> {
  const [row] = await sql.all<{ payload: Buffer | null }>('SELECT payload FROM events WHERE id = ?', [eventId]);
  return row?.payload ?? null;
}

/** The event's deliveries, newest first. */
export function selectDeliveries(sql: SqlClient, eventId: string, status?: string): Promise<DeliveryRecord[]> {
  const byStatus = status === undefined ? '' : ' AND status = ?';
  return sql.all<DeliveryRecord>(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE event_id = ?${byStatus} ORDER BY created_at DESC, id DESC`,
    status === undefined ? [eventId] : [eventId, status],
  );
}

export function selectAttempts(sql: SqlClient, eventId: string): Promise<AttemptRecordRow[]> {
  return sql.all<AttemptRecordRow>(
    `SELECT delivery_id AS "deliveryId", attempt_number AS "attemptNumber", started_at AS "startedAt", completed_at AS "completedAt", ok,
       status_code AS "statusCode", latency_ms AS "latencyMs", error
     FROM attempts WHERE event_id = ? ORDER BY delivery_id, attempt_number`,
    [eventId],
  );
}

/** Deletes the event; its deliveries and attempts go with it (foreign keys cascade). */
export async function deleteEventRow(sql: SqlClient, orgId: string, id: string): Promise<boolean> {
  return (await sql.run('DELETE FROM events WHERE org_id = ? AND id = ?', [orgId, id])) > 0;
}
