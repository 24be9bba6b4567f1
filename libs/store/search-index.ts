import { recreateSqliteSearchIndex } from './migrations/0019-search-index-detail-none.js';
import { runForRows } from './rows-statement.js';
import type { SqlClient } from './sql-client.js';

/**
 * The payload search index, kept behind the router's insert (docs/decisions/0046-search-behind-the-insert.md): this module owns what is indexed, what is not yet, and how a search reads both. The tables and
 * triggers are migration 0012's; SQLite's index layout is migration 0019's, and its chunks 0022's.
 *
 * Both index chunks of up to `CHUNK_EVENTS` events a row. SQLite: events up to the rowid
 * `search_index_state.indexed_through` are in the FTS5 table `events_search`, a row per run of
 * consecutive events holding their texts, which `search_chunks` names by its last event's rowid and holds
 * its first and whether it is stale (migration 0022); the later events are the unindexed tail.
 * PostgreSQL: `search_chunks` holds each word of up to `CHUNK_EVENTS` events of one organization once a
 * row (migration 0021; `chunkWords`), `search_pending` the ids of events whose text is not indexed yet.
 */

/**
 * Events one indexing batch takes. SQLite: the transaction holds the file's one write lock (the router's
 * and recorder's transactions wait for it, on another thread's connection or behind it on the same), so a
 * batch stays short (64 made delivery latency's p99 worse under load; docs/decisions/0046-search-behind-the-insert.md). 32 in chunks
 * hold it about as long as 16 did a row an event, and cost less an event than 16 (fewer commits).
 * PostgreSQL: the statement runs on the server while the loop goes on, and each batch is a round trip and
 * a commit, so a batch is larger.
 */
export const searchBatchSize = (sql: Pick<SqlClient, 'kind'>) => (sql.kind === 'postgres' ? 256 : 32);

/**
 * Events whose texts share one row of the trigram index. Their shared trigrams are one entry, not one
 * each: on PostgreSQL the indexer took 156-238 µs of CPU an event with 8 or 16 a row against 277-328 with
 * one (relay and server, 1 KB code-host payloads), but a search fetches every event of each chunk it finds
 * to check it, and 16 made a rare term's search 60% slower where 8 left it as it was. SQLite's FTS5 index
 * took 72-74 µs an event with 8 a row against 97-107 with one (docs/decisions/0048-sqlite-search-index-layout.md).
 */
export const CHUNK_EVENTS = 8;

/** SQLite: stale chunks (an event of them deleted or its text changed) one batch indexes again. */
const STALE_CHUNKS_A_BATCH = 16;

const CHUNK_INSERT = { head: 'INSERT INTO search_chunks (org_id, event_ids, payload_text)', row: '(?, ?::varchar[], ?)' };

interface IndexedText {
  id: string;
  org_id: string;
  payload_text: string;
}

/** PostgreSQL: events in id order, as chunk rows: up to CHUNK_EVENTS of one organization each, with their texts' words. */
function chunksOf(events: IndexedText[]): unknown[][] {
  const byOrg = new Map<string, IndexedText[]>();
  for (const event of events) {
    const orgEvents = byOrg.get(event.org_id);
    if (orgEvents) orgEvents.push(event);
    else byOrg.set(event.org_id, [event]);
  }
  return [...byOrg].flatMap(([orgId, orgEvents]) =>
    Array.from({ length: Math.ceil(orgEvents.length / CHUNK_EVENTS) }, (_, index) => {
      const chunk = orgEvents.slice(index * CHUNK_EVENTS, (index + 1) * CHUNK_EVENTS);
      return [orgId, chunk.map((event) => event.id), chunkWords(chunk.map((event) => event.payload_text))];
    }),
  );
}

/**
 * PostgreSQL: what a chunk's row holds of its events' texts: each word once (a word: a run of characters
 * other than ASCII punctuation, spaces and controls), in first-seen order, joined by spaces. pg_trgm makes
 * a text's trigrams from its words alone, so the index learns what it would from the texts themselves, and
 * its trigram extraction (a fifth of the server's CPU at 2,000 events/s) reads far less text, as webhooks
 * of one source repeat their keys and most values (a fifth of the bench's code-host bodies). A search asks
 * a chunk for each word of the term (`chunkMayHold`) and each event found for the whole term (searchMatches).
 */
function chunkWords(texts: Iterable<string>): string {
  const words = new Set<string>();
  for (const text of texts) for (const word of text.split(WORD_BREAKS)) if (word !== '') words.add(word);
  return [...words].join(' ');
}

/** The words of a search term, split as `chunkWords` splits a text: each lies within one word of any text holding the term. */
const termWords = (term: string) => term.split(WORD_BREAKS).filter((word) => word !== '');

// ASCII punctuation, spaces and controls: each folds to itself, and no other character folds to one, so a
// term's word lies within one word of every text holding the term, whatever the database's case folding.
const WORD_BREAKS = /[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+/;

/**
 * PostgreSQL: the condition on a `search_chunks` row that may hold `term`: it holds each of the term's
 * words (any row, for a term of punctuation alone). Each event of the rows found is still to be checked.
 */
export function chunkMayHold(term: string): { condition: string; params: string[] } {
  const words = termWords(term);
  return { condition: words.map(() => `payload_text ILIKE ? ESCAPE '\\'`).join(' AND ') || 'TRUE', params: words.map(likePattern) };
}

/**
 * Indexes up to `limit` events not yet indexed, oldest first (SQLite: after indexing its stale chunks
 * again); returns how many it took, events and stale chunks: 0 when nothing was left.
 */
export async function indexSearchBatch(sql: SqlClient, limit = searchBatchSize(sql)): Promise<number> {
  if (sql.kind === 'postgres') {
    return sql.transaction(async (tx) => {
      // Event ids are ULIDs, so their order is (about) the order events were received. SKIP LOCKED:
      // indexers in several router processes take different events.
      const taken = await tx.all<{ id: string; org_id: string | null; payload_text: string | null }>(
        `WITH taken AS (
           DELETE FROM search_pending WHERE event_id IN (SELECT event_id FROM search_pending ORDER BY event_id LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING event_id
         )
         SELECT t.event_id AS id, e.org_id, e.payload_text FROM taken t LEFT JOIN events e ON e.id = t.event_id ORDER BY t.event_id`,
        [limit],
      );
      const rows = chunksOf(taken.filter((event): event is IndexedText => event.org_id !== null && event.payload_text !== null));
      if (rows.length > 0) await runForRows(tx, CHUNK_INSERT, rows);
      return taken.length;
    });
  }
  return sql.transaction((tx) => indexSqliteBatch(tx, limit));
}

async function indexSqliteBatch(tx: SqlClient, limit: number): Promise<number> {
  let taken = 0;
  // The newest first: one above the mark (its newest events were deleted, and the mark lowered) must take
  // its survivors' range before new events' chunks take rowids above them.
  const stale = await tx.all<{ last_rowid: number; first_rowid: number; mark: number }>(
    'SELECT last_rowid, first_rowid, (SELECT indexed_through FROM search_index_state) AS mark FROM search_chunks WHERE stale = 1 ORDER BY last_rowid DESC LIMIT ?',
    [STALE_CHUNKS_A_BATCH],
  );
  for (const chunk of stale) {
    await tx.run('DELETE FROM events_search WHERE rowid = ?', [chunk.last_rowid]);
    await tx.run('DELETE FROM search_chunks WHERE last_rowid = ?', [chunk.last_rowid]);
    // Up to the mark only: a rowid above it is a new event's, which SQLite gave again after the newest were deleted.
    await indexSqliteChunks(tx, chunk.first_rowid, Math.min(chunk.last_rowid, chunk.mark));
    taken += 1;
  }
  if (stale.length === STALE_CHUNKS_A_BATCH) return taken;
  // Inside the write transaction no other insert is in flight: every rowid up to the batch's last is final.
  const [range] = await tx.all<{ after: number; through: number | null; taken: number }>(
    `SELECT s.indexed_through AS after, MAX(b.rowid) AS through, COUNT(b.rowid) AS taken FROM search_index_state s
     LEFT JOIN (SELECT rowid FROM events WHERE rowid > (SELECT indexed_through FROM search_index_state) ORDER BY rowid LIMIT ?) b ON 1 = 1`,
    [limit],
  );
  if (!range || range.through === null) return taken;
  await indexSqliteChunks(tx, range.after + 1, range.through);
  await tx.run('UPDATE search_index_state SET indexed_through = ?', [range.through]);
  return taken + range.taken;
}

/** SQLite: the events of a rowid range that have a text, in chunks of CHUNK_EVENTS consecutive ones. */
const SQLITE_CHUNKS = `WITH chunked AS (SELECT rowid, payload_text, (row_number() OVER (ORDER BY rowid) - 1) / ${CHUNK_EVENTS} AS chunk
  FROM events WHERE rowid BETWEEN ? AND ? AND payload_text IS NOT NULL)`;

/**
 * SQLite: indexes the events of a rowid range in chunks, each named by its last event's rowid. A chunk's
 * row holds its texts whole, a line each: unlike PostgreSQL's words (`chunkWords`), a term's trigrams
 * across punctuation stay in it, which keeps the chunks a term's trigrams find about as few as the events
 * were (a term spanning two words of common trigrams found every chunk, and took 190 ms against 10).
 */
async function indexSqliteChunks(tx: SqlClient, first: number, last: number): Promise<void> {
  await tx.run(`${SQLITE_CHUNKS} INSERT INTO events_search (rowid, payload_text) SELECT MAX(rowid), group_concat(payload_text, char(10)) FROM chunked GROUP BY chunk`, [first, last]);
  await tx.run(`${SQLITE_CHUNKS} INSERT INTO search_chunks (last_rowid, first_rowid) SELECT MAX(rowid), MIN(rowid) FROM chunked GROUP BY chunk`, [first, last]);
}

/**
 * Stored events whose payload text the index does not hold yet. SQLite: the rowids past the mark, read
 * from the two ends (counting the rows took 60 ms for 200,000 behind, each pass of an indexer that gives
 * way to a busy machine); an event deleted there before its turn counts until the indexer passes it.
 */
export async function searchIndexLag(sql: SqlClient): Promise<number> {
  const [row] =
    sql.kind === 'postgres'
      ? await sql.all<{ n: string | number }>('SELECT COUNT(*) AS n FROM search_pending')
      : await sql.all<{ n: number }>('SELECT MAX(0, COALESCE(MAX(rowid), 0) - (SELECT indexed_through FROM search_index_state)) AS n FROM events');
  return Number(row?.n ?? 0);
}

export interface IndexingLoop {
  /** After each batch, with the count so far: to yield to the event loop, or report progress. */
  afterBatch?: (indexed: number) => Promise<void>;
  /** Checked before each batch: a stopping process leaves the rest to the next pass. */
  shouldStop?: () => boolean;
}

/** Indexes batches until nothing is left (or it is told to stop); returns how many events it indexed. */
export async function indexAllPending(sql: SqlClient, loop: IndexingLoop = {}): Promise<number> {
  let total = 0;
  while (!loop.shouldStop?.()) {
    const taken = await indexSearchBatch(sql);
    if (taken === 0) break;
    total += taken;
    await loop.afterBatch?.(total);
  }
  return total;
}

/**
 * Empties the index and marks every stored event unindexed: `indexAllPending` then rebuilds it from the
 * events' own payload text. Searches meanwhile stay complete (everything is the unindexed tail), only slower.
 * SQLite: the index is recreated in migration 0019's layout, which a large index kept until now.
 */
export function resetSearchIndex(sql: SqlClient): Promise<void> {
  return sql.transaction(async (tx) => {
    if (tx.kind === 'postgres') {
      await tx.run('DELETE FROM search_chunks');
      await tx.run('INSERT INTO search_pending (event_id) SELECT id FROM events WHERE payload_text IS NOT NULL ON CONFLICT DO NOTHING');
    } else {
      await tx.run('DELETE FROM search_chunks');
      await recreateSqliteSearchIndex((statement) => tx.run(statement));
    }
  });
}

export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Newest payloads sampled to tell a term's rare trigrams from its common ones, and the share that is rare. */
const TRIGRAM_SAMPLE_ROWS = 200;
const RARE_TRIGRAM_SHARE = 0.05;

/**
 * The longest part of `text` whose trigrams are all rare among the organization's newest payloads; `text`
 * itself when it has no such part, or is one. Both indexes read the whole posting list of each trigram of
 * a term, so a long rare term made of common trigrams (an e-mail address: `cus`, `tom`, `exa`...) costs
 * as much as the commonest of them; its rare part finds the same events (and a few more, which the caller
 * checks against the whole term) from short lists. Printable ASCII terms only: the sample is folded by
 * `LOWER`, which on SQLite folds ASCII letters only.
 */
export async function rarePart(sql: SqlClient, orgId: string, text: string): Promise<string> {
  if (!/^[\x20-\x7e]{4,}$/.test(text)) return text;
  const lowered = text.toLowerCase();
  const trigrams = Array.from({ length: lowered.length - 2 }, (_, i) => lowered.slice(i, i + 3));
  const holds = sql.kind === 'postgres' ? 'strpos(t, ?)' : 'instr(t, ?)';
  const [row] = await sql.all<Record<string, number | string>>(
    `SELECT COUNT(*) AS sampled, ${trigrams.map((_, i) => `SUM(CASE WHEN ${holds} > 0 THEN 1 ELSE 0 END) AS t${i}`).join(', ')}
     FROM (SELECT LOWER(substr(payload_text, 1, 4096)) AS t FROM events WHERE org_id = ? AND payload_text IS NOT NULL ORDER BY created_at DESC LIMIT ?) sample`,
    [...trigrams, orgId, TRIGRAM_SAMPLE_ROWS],
  );
  const rareBelow = Number(row?.sampled ?? 0) * RARE_TRIGRAM_SHARE;
  let best = { start: 0, length: 0 };
  for (let start = 0; start < trigrams.length; ) {
    let end = start;
    while (end < trigrams.length && Number(row![`t${end}`]) <= rareBelow) end += 1;
    if (end - start > best.length) best = { start, length: end - start };
    start = end + 1;
  }
  if (best.length === 0 || best.length === trigrams.length) return text;
  return text.slice(best.start, best.start + best.length + 2);
}

/**
 * The keys (`column`, selected as `match_key`) of the organization's events whose payload text holds `text`, case-insensitively:
 * those the index finds, and those of the unindexed tail, checked one by one (few, while the indexer
 * keeps up). Null on SQLite for a term shorter than a trigram, which no index answers. The
 * index is asked for `part` (a part of `text`: rarePart); each event it finds is checked for `text` in its
 * own text, as both indexes find chunks of several events (migrations 0021 and 0022), and SQLite's holds
 * no trigram positions (migration 0019).
 */
export function searchMatches(sql: SqlClient, orgId: string, text: string, part = text): { column: string; query: string; params: unknown[] } | null {
  if (sql.kind === 'postgres') {
    const pattern = likePattern(text);
    const tail = `SELECT p.event_id AS match_key FROM search_pending p JOIN events t ON t.id = p.event_id WHERE t.org_id = ? AND t.payload_text ILIKE ? ESCAPE '\\'`;
    // The chunks that may hold `part`, then each of their events holding `text` in its own text.
    const chunks = chunkMayHold(part);
    return {
      column: 'e.id',
      query: `SELECT f.id AS match_key FROM (SELECT unnest(event_ids) AS id FROM search_chunks WHERE org_id = ? AND ${chunks.condition}) c
        JOIN events f ON f.id = c.id WHERE f.payload_text ILIKE ? ESCAPE '\\' UNION ALL ${tail}`,
      params: [orgId, ...chunks.params, pattern, orgId, pattern],
    };
  }
  const match = trigramQuery(part);
  if (match === null) return null;
  const found = sqliteTextHolds('v.payload_text', text);
  const tail = sqliteTextHolds('payload_text', text);
  return {
    column: 'e.rowid',
    // The chunks that may hold `part`, then each of their events holding `text` in its own text. `+v.org_id`
    // keeps the organization's index out of the plan: by it SQLite read all of the organization's events for
    // each chunk (seconds), where the chunk's rowid range is a few rows.
    query: `SELECT v.rowid AS match_key FROM ${sqliteIndexedEvents('v')} WHERE events_search MATCH ? AND +v.org_id = ? AND ${found.condition}
      UNION ALL SELECT rowid AS match_key FROM events WHERE rowid > (SELECT indexed_through FROM search_index_state) AND org_id = ? AND ${tail.condition}`,
    params: [match, orgId, ...found.params, orgId, ...tail.params],
  };
}

/**
 * SQLite: the index's chunks joined to their events, as `alias`: with `events_search MATCH ?`, the events
 * of the chunks that hold a term's trigrams, each still to be checked for the term in its own text.
 */
export const sqliteIndexedEvents = (alias: string) =>
  `events_search s JOIN search_chunks c ON c.last_rowid = s.rowid JOIN events ${alias} ON ${alias}.rowid BETWEEN c.first_rowid AND c.last_rowid`;

/**
 * SQLite: whether `column` holds `term` case-insensitively. The term is folded here, once, and each row by
 * `unicode_lower`, the store's connection's fold of all of Unicode (sql-client.ts): the same fold.
 */
export function sqliteTextHolds(column: string, term: string): { condition: string; params: [string] } {
  return { condition: `instr(unicode_lower(${column}), ?) > 0`, params: [term.toLowerCase()] };
}

/**
 * SQLite: the FTS5 query for the chunks that may hold `text`: all of its trigrams (by code point, as the
 * trigram tokenizer counts), since the index knows which chunks hold a trigram but not where (migration
 * 0019's layout). Every chunk holding the term holds each of them; the events found are checked for the
 * term itself. Null for a term shorter than a trigram, which the index cannot answer.
 */
export function trigramQuery(text: string): string | null {
  const points = [...text];
  if (points.length < 3) return null;
  const trigrams = new Set(Array.from({ length: points.length - 2 }, (_, i) => points.slice(i, i + 3).join('')));
  return [...trigrams].map((trigram) => `"${trigram.replace(/"/g, '""')}"`).join(' AND ');
}
