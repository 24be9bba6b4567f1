import type { MigrationInterface, QueryRunner } from 'typeorm';
import { installPgTrgm } from './0004-event-queries.js';

/**
 * PostgreSQL: the trigram index holds chunks of a few events' texts (one organization's; how many is
 * `CHUNK_EVENTS`; since, each word of them once: search-index.ts, `chunkWords`), not a row per event
 * (docs/decisions/0047-postgres-search-chunks.md). A 1 KB payload has about 420 distinct trigrams, each an
 * entry of the GIN index; the events of a chunk share many of theirs (keys, words, hex digits), so
 * indexing costs about half as much and takes a third of the space.
 * A search finds the chunks, then checks each of their events' own text.
 *
 * A chunk is never changed: when an event of it is deleted or its text changes (payload expiry), the
 * chunk goes and its other events are noted in `search_pending` again, so no text outlives its event in
 * the index. Deletes are handled per statement (retention deletes thousands), text changes per row.
 *
 * Existing indexed events are noted again and indexed by the search indexer behind the relay's start;
 * searches stay complete meanwhile (unindexed events are checked one by one). SQLite is unchanged.
 */
export class SearchChunks1795305600020 implements MigrationInterface {
  name = 'SearchChunks1795305600020';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') return;
    await runner.query(`CREATE TABLE search_chunks (
      id bigserial PRIMARY KEY,
      org_id varchar(40) NOT NULL,
      event_ids varchar(40)[] NOT NULL,
      payload_text text NOT NULL)`);
    await runner.query('CREATE INDEX ix_search_chunks_events ON search_chunks USING gin (event_ids)');
    // Without the extension (a user who may not create it) search scans this table instead.
    if (await installPgTrgm(runner)) await runner.query('CREATE INDEX ix_search_chunks_trgm ON search_chunks USING gin (payload_text gin_trgm_ops)');
    await runner.query('INSERT INTO search_pending (event_id) SELECT event_id FROM events_search ON CONFLICT DO NOTHING');
    await runner.query('DROP TABLE events_search');
    // The chunks of these events go; their events that still have a text are queued again. Called after
    // the change, so a deleted event is no longer visible here and a changed one is queued with its new text.
    await runner.query(`CREATE FUNCTION search_chunks_drop(ids varchar[]) RETURNS void LANGUAGE sql AS $$
      WITH gone AS (DELETE FROM search_chunks WHERE event_ids && ids RETURNING event_ids)
      INSERT INTO search_pending (event_id)
        SELECT e.id FROM events e JOIN (SELECT unnest(event_ids) AS id FROM gone) g ON g.id = e.id
        WHERE e.payload_text IS NOT NULL
        ON CONFLICT DO NOTHING
    $$`);
    await runner.query(`CREATE OR REPLACE FUNCTION events_search_pending() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN PERFORM search_chunks_drop(ARRAY[NEW.id]); END IF;
        IF NEW.payload_text IS NOT NULL THEN INSERT INTO search_pending (event_id) VALUES (NEW.id) ON CONFLICT DO NOTHING; END IF;
        RETURN NULL;
      END $$`);
    await runner.query(`CREATE FUNCTION events_search_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM search_chunks_drop((SELECT array_agg(id) FROM deleted));
        RETURN NULL;
      END $$`);
    await runner.query(
      'CREATE TRIGGER events_search_deleted AFTER DELETE ON events REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION events_search_deleted()',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') return;
    await runner.query('DROP TRIGGER events_search_deleted ON events');
    await runner.query('DROP FUNCTION events_search_deleted()');
    await runner.query(`CREATE OR REPLACE FUNCTION events_search_pending() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN DELETE FROM events_search WHERE event_id = NEW.id; END IF;
        IF NEW.payload_text IS NOT NULL THEN INSERT INTO search_pending (event_id) VALUES (NEW.id) ON CONFLICT DO NOTHING; END IF;
        RETURN NULL;
      END $$`);
    await runner.query(`CREATE TABLE events_search (
      event_id varchar(40) PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
      org_id varchar(40) NOT NULL,
      payload_text text NOT NULL)`);
    if ((await runner.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).length > 0) {
      await runner.query('CREATE INDEX ix_events_search_trgm ON events_search USING gin (payload_text gin_trgm_ops)');
    }
    await runner.query('DROP FUNCTION search_chunks_drop(varchar[])');
    await runner.query('DROP TABLE search_chunks');
    await runner.query('INSERT INTO search_pending (event_id) SELECT id FROM events WHERE payload_text IS NOT NULL ON CONFLICT DO NOTHING');
  }
}
