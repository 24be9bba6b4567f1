import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createSqliteSearchTriggers, installPgTrgm } from './0004-event-queries.js';

/**
 * Payload search is indexed behind the router's insert, by the search indexer (libs/store/search-index.ts),
 * no longer inside the transaction that stores an event (docs/decisions/0046-search-behind-the-insert.md).
 *
 * SQLite: the FTS5 table stays; its insert trigger goes. `search_index_state.indexed_through` is the rowid
 * up to which events are indexed. Deletes still leave the index by trigger (they are not the hot path),
 * and a delete of the newest rows lowers the mark to the newest rowid left, because SQLite hands that
 * rowid plus one to the next insert: the mark never hides a new event.
 *
 * PostgreSQL: the trigram index moves from `events` to `events_search`, which the indexer fills; an
 * insert only notes its event's id in `search_pending` (a row in a small B-tree, no trigrams). Both
 * tables leave with their event (foreign keys cascade).
 */
export class SearchIndexer1795305600011 implements MigrationInterface {
  name = 'SearchIndexer1795305600011';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') await upPostgres(runner);
    else await upSqlite(runner);
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') {
      await runner.query('DROP TRIGGER events_search_pending ON events');
      await runner.query('DROP FUNCTION events_search_pending()');
      await runner.query('DROP TABLE search_pending');
      await runner.query('DROP TABLE events_search');
      if ((await runner.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).length > 0) {
        await runner.query('CREATE INDEX ix_events_payload_trgm ON events USING gin (payload_text gin_trgm_ops)');
      }
      return;
    }
    await runner.query('DROP TRIGGER events_search_delete');
    await runner.query('DROP TRIGGER events_search_update');
    await runner.query(`INSERT INTO events_search (rowid, payload_text) SELECT rowid, payload_text FROM events
      WHERE payload_text IS NOT NULL AND rowid > (SELECT indexed_through FROM search_index_state)`);
    await runner.query('DROP TABLE search_index_state');
    await createSqliteSearchTriggers(runner);
  }
}

async function upSqlite(runner: QueryRunner): Promise<void> {
  await runner.query('DROP TRIGGER events_search_insert');
  await runner.query('DROP TRIGGER events_search_delete');
  await runner.query('DROP TRIGGER events_search_update');
  await runner.query('CREATE TABLE search_index_state (id integer PRIMARY KEY CHECK (id = 1), indexed_through integer NOT NULL)');
  // Every stored event was indexed by the insert trigger until now.
  await runner.query('INSERT INTO search_index_state (id, indexed_through) SELECT 1, COALESCE(MAX(rowid), 0) FROM events');
  await createSqliteIndexerTriggers(runner);
}

/** SQLite: the triggers that keep an index of a row an event right on deletes and payload changes (also migration 0022's down). */
export async function createSqliteIndexerTriggers(runner: Pick<QueryRunner, 'query'>): Promise<void> {
  // Deleting a rowid the contentless index does not hold is a no-op, so no check of the mark here.
  await runner.query(`CREATE TRIGGER events_search_delete AFTER DELETE ON events BEGIN
    DELETE FROM events_search WHERE rowid = old.rowid;
    UPDATE search_index_state SET indexed_through = COALESCE((SELECT MAX(rowid) FROM events), 0)
      WHERE indexed_through > COALESCE((SELECT MAX(rowid) FROM events), 0);
  END`);
  // Only an indexed event's text is replaced here; one not yet indexed is read as it is when its turn comes.
  await runner.query(`CREATE TRIGGER events_search_update AFTER UPDATE OF payload_text ON events
    WHEN old.rowid <= (SELECT indexed_through FROM search_index_state) BEGIN
    DELETE FROM events_search WHERE rowid = old.rowid;
    INSERT INTO events_search (rowid, payload_text) SELECT new.rowid, new.payload_text WHERE new.payload_text IS NOT NULL;
  END`);
}

async function upPostgres(runner: QueryRunner): Promise<void> {
  await runner.query('DROP INDEX IF EXISTS ix_events_payload_trgm');
  await runner.query(`CREATE TABLE events_search (
    event_id varchar(40) PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    org_id varchar(40) NOT NULL,
    payload_text text NOT NULL)`);
  await runner.query('INSERT INTO events_search (event_id, org_id, payload_text) SELECT id, org_id, payload_text FROM events WHERE payload_text IS NOT NULL');
  // Without the extension (a user who may not create it) search scans this table instead.
  if (await installPgTrgm(runner)) await runner.query('CREATE INDEX ix_events_search_trgm ON events_search USING gin (payload_text gin_trgm_ops)');
  await runner.query('CREATE TABLE search_pending (event_id varchar(40) PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE)');
  // A new text (an insert, or a payload expired) is noted for the indexer; the old one leaves the index now.
  await runner.query(`CREATE FUNCTION events_search_pending() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' THEN DELETE FROM events_search WHERE event_id = NEW.id; END IF;
      IF NEW.payload_text IS NOT NULL THEN INSERT INTO search_pending (event_id) VALUES (NEW.id) ON CONFLICT DO NOTHING; END IF;
      RETURN NULL;
    END $$`);
  await runner.query('CREATE TRIGGER events_search_pending AFTER INSERT OR UPDATE OF payload_text ON events FOR EACH ROW EXECUTE FUNCTION events_search_pending()');
}
