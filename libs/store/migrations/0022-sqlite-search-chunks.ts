import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createSqliteIndexerTriggers } from './0012-search-indexer.js';
import { recreateSqliteSearchIndex } from './0019-search-index-detail-none.js';

/**
 * SQLite: a row of the FTS5 index holds a chunk of consecutive events (up to `CHUNK_EVENTS`, their texts a
 * line each: search-index.ts), not one event, as PostgreSQL's rows have since migration 0021. The indexer
 * takes about a quarter less CPU an event (docs/decisions/0048-sqlite-search-index-layout.md).
 *
 * `search_chunks` names each chunk by the rowid of its last event (the index row's rowid) and holds its
 * first; the chunks' ranges never overlap. A chunk is never changed in place: when an event of it is
 * deleted or its text changes, the chunk is marked stale, and the indexer indexes what is left of it again
 * (stale chunks first). A search still finds its other events meanwhile, as the stale row holds their
 * words too, and each event found is checked against its own text. A chunk with no event left goes at
 * once with its index row, so retention, which deletes the oldest events in order, leaves nothing behind.
 *
 * The index's existing rows (one event each) become chunks of one: nothing is indexed again.
 */
export class SqliteSearchChunks1795305600021 implements MigrationInterface {
  name = 'SqliteSearchChunks1795305600021';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') return;
    await runner.query('CREATE TABLE search_chunks (last_rowid integer PRIMARY KEY, first_rowid integer NOT NULL, stale integer NOT NULL DEFAULT 0)');
    await runner.query('CREATE INDEX ix_search_chunks_stale ON search_chunks (last_rowid) WHERE stale = 1');
    await runner.query(`INSERT INTO search_chunks (last_rowid, first_rowid)
      SELECT rowid, rowid FROM events WHERE rowid <= (SELECT indexed_through FROM search_index_state) AND payload_text IS NOT NULL`);
    await runner.query('DROP TRIGGER events_search_delete');
    await runner.query('DROP TRIGGER events_search_update');
    // The chunk holding the row, found by one seek of the primary key (a range of it would scan every later chunk).
    const chunkOfOld = 'last_rowid = (SELECT MIN(last_rowid) FROM search_chunks WHERE last_rowid >= old.rowid) AND first_rowid <= old.rowid';
    const emptied = 'NOT EXISTS (SELECT 1 FROM events e WHERE e.rowid BETWEEN search_chunks.first_rowid AND search_chunks.last_rowid)';
    await runner.query(`CREATE TRIGGER events_search_delete AFTER DELETE ON events BEGIN
      DELETE FROM events_search WHERE rowid = (SELECT last_rowid FROM search_chunks WHERE ${chunkOfOld} AND ${emptied});
      DELETE FROM search_chunks WHERE ${chunkOfOld} AND ${emptied};
      UPDATE search_chunks SET stale = 1 WHERE ${chunkOfOld};
      UPDATE search_index_state SET indexed_through = COALESCE((SELECT MAX(rowid) FROM events), 0)
        WHERE indexed_through > COALESCE((SELECT MAX(rowid) FROM events), 0);
    END`);
    // An event not yet indexed is read as it is when its turn comes.
    await runner.query(`CREATE TRIGGER events_search_update AFTER UPDATE OF payload_text ON events
      WHEN old.rowid <= (SELECT indexed_through FROM search_index_state) BEGIN
      UPDATE search_chunks SET stale = 1 WHERE ${chunkOfOld};
    END`);
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') return;
    await runner.query('DROP TRIGGER events_search_delete');
    await runner.query('DROP TRIGGER events_search_update');
    await runner.query('DROP TABLE search_chunks');
    // Migration 0012's triggers, over an index of a row an event again, rebuilt from the stored events.
    await createSqliteIndexerTriggers(runner);
    await recreateSqliteSearchIndex((sql) => runner.query(sql));
  }
}
