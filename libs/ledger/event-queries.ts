import { countEvents } from '../store/event-counts.js';
import { decodeRows } from '../store/row-schema.js';
import {
  attemptRecordSchema,
  deliveryRecordSchema,
  eventKeySchema,
  eventRecordSchema,
  eventSummarySchema,
  type AttemptRecordRow,
  type DeliveryRecord,
  type EventKey,
  type EventRecord,
  type EventSummaryRecord,
} from './ledger-rows.js';
import { likePattern, rarePart, searchMatches, sqliteTextHolds } from '../store/search-index.js';
import type { SqlClient } from '../store/sql-client.js';

export type { AttemptRecordRow, DeliveryRecord, EventKey, EventRecord, EventSummaryRecord } from './ledger-rows.js';

export interface EventFilter {
  sourceId?: string;
  /** Events with a delivery to this destination. */
  destinationId?: string;
  status?: string;
  /** Inclusive bounds on createdAt, epoch ms. */
  from?: number;
  to?: number;
  search?: string;
  signatureValid?: boolean;
  /** Events with a delivery to the issue's destination that has failed since the issue was first seen. */
  issueId?: string;
}

const EVENT_COLUMNS = `e.id, e.source_id AS "sourceId", s.name AS "sourceName", s.mask_fields AS "maskFields", e.status, e.headers,
  e.content_type AS "contentType", e.payload_size AS "payloadSize", e.payload_hash AS "payloadHash", e.payload_sealed AS "payloadSealed",
  e.payload_expired_at AS "payloadExpiredAt", e.signature_valid AS "signatureValid", e.received_at AS "receivedAt",
  e.validated_at AS "validatedAt", e.queued_at AS "queuedAt", e.created_at AS "createdAt", e.deliveries_count AS "deliveriesCount",
  e.deliveries_succeeded AS "deliveriesSucceeded", e.deliveries_failed AS "deliveriesFailed", e.failure_reason AS "failureReason",
  e.ingest_path AS "ingestPath", e.ingest_query AS "ingestQuery", e.filtered_route_ids AS "filteredRouteIds", e.trace_id AS "traceId"`;

const DELIVERY_COLUMNS = `id, destination_id AS "destinationId", destination_name AS "destinationName", status, attempt_count AS "attemptCount",
  last_status_code AS "statusCode", last_error AS "error", latency_ms AS "latencyMs", delivered_at AS "deliveredAt", failure_reason AS "failureReason", transformation, created_at AS "createdAt"`;

const SUMMARY_COLUMNS = `e.id, e.source_id AS "sourceId", e.status, e.headers, e.payload_size AS "payloadSize", e.deliveries_count AS "deliveriesCount",
  e.deliveries_succeeded AS "deliveriesSucceeded", e.received_at AS "receivedAt"`;

/** The summary columns as named by SUMMARY_COLUMNS, read back from a subquery aliased `e`. */
const SUMMARY_FIELDS = 'e.id, e."sourceId", e.status, e.headers, e."payloadSize", e."deliveriesCount", e."deliveriesSucceeded", e."receivedAt"';

const NEWEST_FIRST = 'ORDER BY e.created_at DESC, e.id DESC';

/** The bounds on the work of one list request (docs/decisions/0031-event-counts-and-list-totals.md and 0032-bounded-search.md). */
export interface EventListLimits {
  /** Rows a total counts before it stops and gives a lower bound instead. */
  count: number;
  /** Candidates a search examines in list order, newest first, before it stops. */
  searchScan: number;
  /** Matches a search gathers from the search index; a term with more is too broad to gather and sort. */
  searchIndex: number;
}

export const EVENT_LIST_LIMITS: EventListLimits = { count: 10_000, searchScan: 1_000, searchIndex: 1_000 };

const sqlBoolean = (sql: SqlClient, value: boolean) => (sql.kind === 'postgres' ? String(value) : value ? '1' : '0');

interface Where {
  where: string;
  params: unknown[];
}

/** The conditions of every filter but search. */
function whereClause(sql: SqlClient, orgId: string, filter: EventFilter): Where {
  const conditions = ['e.org_id = ?'];
  const params: unknown[] = [orgId];
  const add = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filter.sourceId !== undefined) add('e.source_id = ?', filter.sourceId);
  if (filter.destinationId !== undefined) add('EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.destination_id = ?)', filter.destinationId);
  if (filter.status !== undefined) add('e.status = ?', filter.status);
  if (filter.from !== undefined) add('e.created_at >= ?', filter.from);
  if (filter.to !== undefined) add('e.created_at <= ?', filter.to);
  // A literal, not a parameter: SQLite uses the partial index of failed verifications only for a literal.
  if (filter.signatureValid !== undefined) add(`e.signature_valid = ${sqlBoolean(sql, filter.signatureValid)}`);
  if (filter.issueId !== undefined) {
    add(
      `EXISTS (SELECT 1 FROM deliveries d JOIN issues i ON i.destination_id = d.destination_id
        WHERE i.id = ? AND i.org_id = e.org_id AND d.event_id = e.id AND d.status = 'failed' AND d.updated_at >= i.first_seen_at)`,
      filter.issueId,
    );
  }
  return { where: conditions.join(' AND '), params };
}

const and = (where: Where, condition: string, params: unknown[]): Where => ({ where: `${where.where} AND ${condition}`, params: [...where.params, ...params] });

/**
 * Whether a row's own payload text holds the term, case-insensitively, with no index: what the
 * newest-first walk checks each candidate against.
 */
function textHolds(sql: SqlClient, text: string): { condition: string; params: unknown[] } {
  if (sql.kind === 'postgres') return { condition: `e.payload_text ILIKE ? ESCAPE '\\'`, params: [likePattern(text)] };
  return sqliteTextHolds('e.payload_text', text);
}

/**
 * Up to `limit` events of the organization whose payload matches, found through the search index and its
 * unindexed tail (libs/store/search-index.ts; SQLite: the FTS5 trigram table, for terms of 3 characters
 * or more). Null where SQLite has no index for the term.
 */
async function indexMatches(sql: SqlClient, orgId: string, text: string, limit: number): Promise<{ condition: string; params: unknown[] } | null> {
  const matches = searchMatches(sql, orgId, text, await rarePart(sql, orgId, text));
  if (!matches) return null;
  const rows = await sql.all<{ match_key: string | number }>(`${matches.query} LIMIT ?`, [...matches.params, limit]);
  return { condition: inList(matches.column, rows.length), params: rows.map((row) => row.match_key) };
}

/** Every match of a search, as one condition: through the index and its tail, or each text where SQLite has no index for the term. */
function everyMatch(sql: SqlClient, orgId: string, text: string): { condition: string; params: unknown[] } {
  const matches = searchMatches(sql, orgId, text);
  return matches ? { condition: `${matches.column} IN (${matches.query})`, params: matches.params } : textHolds(sql, text);
}

const inList = (column: string, n: number) => (n === 0 ? '1 = 0' : `${column} IN (${Array(n).fill('?').join(', ')})`);

export interface EventPage {
  rows: EventSummaryRecord[];
  total: number;
  /** False when `total` is a lower bound: counting every match would cost more than a page is worth. */
  totalExact: boolean;
  /**
   * Set when a search stopped at its bound before it filled the page: the page holds every match created
   * at or after this instant (epoch ms), and older ones were not examined.
   */
  searchedBackTo?: number;
}

interface PageRequest {
  page: number;
  pageSize: number;
}

const offsetOf = (page: PageRequest) => (page.page - 1) * page.pageSize;

/**
 * The page, newest first. The ids come from the index alone (no row is read for the rows skipped by the
 * offset), then the page's rows are read by id.
 */
async function selectPageRows(sql: SqlClient, where: Where, page: PageRequest): Promise<EventSummaryRecord[]> {
  const rows = await sql.all(
    `SELECT ${SUMMARY_COLUMNS} FROM events e
     WHERE e.id IN (SELECT e.id FROM events e WHERE ${where.where} ${NEWEST_FIRST} LIMIT ? OFFSET ?) ${NEWEST_FIRST}`,
    [...where.params, page.pageSize, offsetOf(page)],
  );
  return decodeRows(eventSummarySchema, 'events', rows);
}

/** The matches, counted up to the limit; past it, a lower bound that at least covers the page shown. */
async function boundedTotal(sql: SqlClient, where: Where, page: PageRequest, shown: number, limit: number): Promise<{ total: number; totalExact: boolean }> {
  const [row] = await sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM events e WHERE ${where.where} LIMIT ?) c`, [
    ...where.params,
    limit + 1,
  ]);
  const counted = Number(row?.n ?? 0);
  if (counted <= limit) return { total: counted, totalExact: true };
  return { total: Math.max(limit, offsetOf(page) + shown), totalExact: false };
}

/** Only organization, source and status: the triggers' counts answer exactly, without reading events. */
const countedByKey = (filter: EventFilter) =>
  filter.from === undefined && filter.to === undefined && filter.signatureValid === undefined && filter.destinationId === undefined && !filter.search;

/**
 * A search: first a walk over the newest `searchScan` candidates (the other filters, in list order),
 * checking each one's payload text; a term that is common among them fills the page there, newest first,
 * without gathering every match. A rarer term is then looked up in the search index, which answers
 * exactly when it holds at most `searchIndex` matches; a term with more is answered from the walk, with
 * `searchedBackTo` saying how far back it looked.
 */
async function searchPage(
  sql: SqlClient,
  orgId: string,
  filter: EventFilter & { search: string },
  page: PageRequest,
  limits: EventListLimits,
): Promise<EventPage> {
  const where = whereClause(sql, orgId, filter);
  const holds = textHolds(sql, filter.search);
  // The walk: the newest candidates, read from the list's index; `e` inside and out, so `holds` reads the same.
  const walk = `(SELECT ${SUMMARY_COLUMNS}, e.created_at, e.payload_text FROM events e WHERE ${where.where} ${NEWEST_FIRST} LIMIT ?) e`;
  const walkParams = [...where.params, limits.searchScan];
  // Newest first, and only as far as the page and one more: a common term stops after a few dozen candidates.
  const walkPage = async (offset: number, limit: number) =>
    decodeRows(
      eventSummarySchema,
      'events',
      await sql.all(`SELECT ${SUMMARY_FIELDS} FROM ${walk} WHERE ${holds.condition} ${NEWEST_FIRST} LIMIT ? OFFSET ?`, [...walkParams, ...holds.params, limit, offset]),
    );
  const countHits = async () =>
    Number((await sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${walk} WHERE ${holds.condition}`, [...walkParams, ...holds.params]))[0]?.n ?? 0);
  const found = await walkPage(offsetOf(page), page.pageSize + 1);
  // How many candidates the walk has (at most its bound), and back to when: read from the index alone.
  const [walked] = await sql.all<{ examined: number | string; oldest: number | string | null }>(
    `SELECT COUNT(*) AS examined, MIN(e.created_at) AS oldest FROM (SELECT e.created_at FROM events e WHERE ${where.where} ${NEWEST_FIRST} LIMIT ?) e`,
    walkParams,
  );
  const exhausted = Number(walked?.examined ?? 0) < limits.searchScan;
  if (found.length > page.pageSize) {
    const rows = found.slice(0, page.pageSize);
    // Fewer candidates than the bound: counting every match costs no more than the bound allows.
    return exhausted ? { rows, total: await countHits(), totalExact: true } : { rows, total: offsetOf(page) + found.length, totalExact: false };
  }
  // The page did not fill, so the walk saw all its matches; past the last one, counting them takes a pass.
  const hits = found.length > 0 || offsetOf(page) === 0 ? offsetOf(page) + found.length : await countHits();
  if (exhausted) return { rows: found, total: hits, totalExact: true };
  const matches = await indexMatches(sql, orgId, filter.search, limits.searchIndex + 1);
  if (matches && matches.params.length <= limits.searchIndex) {
    const matching = and(where, matches.condition, matches.params);
    const [rows, counted] = await Promise.all([selectPageRows(sql, matching, page), boundedTotal(sql, matching, page, 0, limits.count)]);
    return { rows, ...counted };
  }
  return { rows: found, total: hits, totalExact: false, searchedBackTo: Number(walked!.oldest) };
}

/**
 * A page of an organization's events, newest first, with how many match: exact from the counts by
 * organization, source and status; counted up to `limits.count` for time windows and signature filters;
 * a lower bound for a search too broad to count (see searchPage).
 */
export async function selectEventPage(
  sql: SqlClient,
  orgId: string,
  filter: EventFilter,
  page: PageRequest,
  limits: EventListLimits = EVENT_LIST_LIMITS,
): Promise<EventPage> {
  if (filter.search) return searchPage(sql, orgId, { ...filter, search: filter.search }, page, limits);
  const where = whereClause(sql, orgId, filter);
  const rows = await selectPageRows(sql, where, page);
  if (countedByKey(filter)) return { rows, total: await countEvents(sql, orgId, filter), totalExact: true };
  return { rows, ...(await boundedTotal(sql, where, page, rows.length, limits.count)) };
}

/** Every event matching `filter`, its search included (checked against the search index and the unindexed tail). */
function everyMatchingEvent(sql: SqlClient, orgId: string, filter: EventFilter): Where {
  const matching = whereClause(sql, orgId, filter);
  if (!filter.search) return matching;
  const search = everyMatch(sql, orgId, filter.search);
  return and(matching, search.condition, search.params);
}

/** How many events match `filter` (every filter field, its search included), and the newest `count` of them. */
async function newestMatches(sql: SqlClient, orgId: string, filter: EventFilter, count: number): Promise<{ matched: number; newest: EventKey[] }> {
  const { where, params } = everyMatchingEvent(sql, orgId, filter);
  const [newest, [total]] = await Promise.all([
    sql.all(`SELECT e.created_at AS "createdAt", e.id FROM events e WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT ?`, [...params, count]),
    sql.all<{ total: number | string }>(`SELECT COUNT(*) AS total FROM events e WHERE ${where}`, params),
  ]);
  return { matched: Number(total?.total ?? 0), newest: decodeRows(eventKeySchema, 'events', newest) };
}

/** How many events match `filter`, and the last of them in the list's order (the newest): what a replay job is bounded by. */
export async function matchingBound(sql: SqlClient, orgId: string, filter: EventFilter): Promise<{ matched: number; newest: EventKey | null }> {
  const { matched, newest } = await newestMatches(sql, orgId, filter, 1);
  return { matched, newest: newest[0] ?? null };
}

/** What a replay job with this filter would replay (a dry run): how many events, and the ids of the newest `size`. */
export async function matchingSample(sql: SqlClient, orgId: string, filter: EventFilter, size: number): Promise<{ matched: number; sample: string[] }> {
  const { matched, newest } = await newestMatches(sql, orgId, filter, size);
  return { matched, sample: newest.map((key) => key.id) };
}

/**
 * Copies into `replay_events` the ids of the next `limit` matching events after `after` (the start
 * when null) and up to `until`, in the list's order, inside the database: no id passes through this
 * process. Row-value comparisons, so both databases read the range from the `(…, created_at, id)`
 * indexes. Returns where the next chunk starts, and whether this one reached `until` (the copy is done).
 */
export async function snapshotEventIdsAfter(
  sql: SqlClient,
  orgId: string,
  filter: EventFilter,
  replayId: string,
  range: { after: EventKey | null; until: EventKey; limit: number },
): Promise<{ last: EventKey; done: boolean }> {
  const { where, params } = everyMatchingEvent(sql, orgId, filter);
  const from = range.after === null ? '' : ' AND (e.created_at, e.id) > (?, ?)';
  const fromParams = range.after === null ? [] : [range.after.createdAt, range.after.id];
  const [end] = decodeRows(
    eventKeySchema,
    'events',
    await sql.all(
      `SELECT e.created_at AS "createdAt", e.id FROM events e WHERE ${where}${from} AND (e.created_at, e.id) <= (?, ?) ORDER BY e.created_at, e.id LIMIT 1 OFFSET ?`,
      [...params, ...fromParams, range.until.createdAt, range.until.id, range.limit - 1],
    ),
  );
  const last = end ?? range.until;
  await sql.run(
    `INSERT INTO replay_events (replay_id, event_id) SELECT ?, e.id FROM events e WHERE ${where}${from} AND (e.created_at, e.id) <= (?, ?)
     ON CONFLICT (replay_id, event_id) DO NOTHING`,
    [replayId, ...params, ...fromParams, last.createdAt, last.id],
  );
  return { last, done: end === undefined || (last.createdAt === range.until.createdAt && last.id === range.until.id) };
}

export async function selectEvent(sql: SqlClient, orgId: string, id: string): Promise<EventRecord | null> {
  const rows = await sql.all(`SELECT ${EVENT_COLUMNS} FROM events e JOIN sources s ON s.id = e.source_id WHERE e.org_id = ? AND e.id = ?`, [orgId, id]);
  return decodeRows(eventRecordSchema, 'events', rows)[0] ?? null;
}

/** The organization's events with these ids (unknown and foreign ids are missing from the map). */
export async function selectEvents(sql: SqlClient, orgId: string, ids: string[]): Promise<Map<string, EventRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.all(
    `SELECT ${EVENT_COLUMNS} FROM events e JOIN sources s ON s.id = e.source_id WHERE e.org_id = ? AND e.id IN (${ids.map(() => '?').join(', ')})`,
    [orgId, ...ids],
  );
  return new Map(decodeRows(eventRecordSchema, 'events', rows).map((row) => [row.id, row]));
}

/** The stored payload bytes; null once retention removed them. */
export async function selectPayload(sql: SqlClient, eventId: string): Promise<Buffer | null> {
  const [row] = await sql.all<{ payload: Buffer | null }>('SELECT payload FROM events WHERE id = ?', [eventId]);
  return row?.payload ?? null;
}

/** The event's deliveries, newest first. */
export async function selectDeliveries(sql: SqlClient, eventId: string, status?: string): Promise<DeliveryRecord[]> {
  const byStatus = status === undefined ? '' : ' AND status = ?';
  const rows = await sql.all(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE event_id = ?${byStatus} ORDER BY created_at DESC, id DESC`,
    status === undefined ? [eventId] : [eventId, status],
  );
  return decodeRows(deliveryRecordSchema, 'deliveries', rows);
}

export async function selectAttempts(sql: SqlClient, eventId: string): Promise<AttemptRecordRow[]> {
  const rows = await sql.all(
    `SELECT delivery_id AS "deliveryId", attempt_number AS "attemptNumber", started_at AS "startedAt", completed_at AS "completedAt", ok,
       status_code AS "statusCode", latency_ms AS "latencyMs", error
     FROM attempts WHERE event_id = ? ORDER BY delivery_id, attempt_number`,
    [eventId],
  );
  return decodeRows(attemptRecordSchema, 'attempts', rows);
}

/** Deletes the event; its deliveries and attempts go with it (foreign keys cascade). */
export async function deleteEventRow(sql: SqlClient, orgId: string, id: string): Promise<boolean> {
  return (await sql.run('DELETE FROM events WHERE org_id = ? AND id = ?', [orgId, id])) > 0;
}
