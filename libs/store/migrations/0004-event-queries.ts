import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fast event pages, payload search, retention sweeps, and sealed payloads.
 *
 * On SQLite, search runs on an FTS5 trigram index kept by triggers on `events` (keyed by rowid). Alter
 * `events` there only with plain `ALTER TABLE` statements: a TypeORM column change rebuilds the table,
 * which drops these triggers and renumbers the rowids.
 */
export class EventQueries1795305600003 implements MigrationInterface {
  name = 'EventQueries1795305600003';

  async up(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    await runner.query(`ALTER TABLE events ADD COLUMN payload_sealed boolean NOT NULL DEFAULT ${postgres ? 'false' : '0'}`);
    // Lists are ordered by (created_at, id): with id in the index a page is read in order, never sorted.
    await runner.query('DROP INDEX ix_events_org_source_created');
    await runner.query('DROP INDEX ix_events_org_status_created');
    await runner.query('CREATE INDEX ix_events_org_source_created ON events (org_id, source_id, created_at, id)');
    await runner.query('CREATE INDEX ix_events_org_status_created ON events (org_id, status, created_at, id)');
    await runner.query('CREATE INDEX ix_events_org_source_status_created ON events (org_id, source_id, status, created_at, id)');
    // Failed verifications are few: a partial index finds them without indexing every event twice more.
    await runner.query(`CREATE INDEX ix_events_org_unsigned_created ON events (org_id, created_at, id) WHERE signature_valid = ${postgres ? 'false' : '0'}`);
    // Retention: the oldest events, and the oldest payloads not yet expired.
    await runner.query('CREATE INDEX ix_events_created ON events (created_at)');
    await runner.query('CREATE INDEX ix_events_payload_live ON events (created_at) WHERE payload_expired_at IS NULL');
    if (postgres) await createTrigramIndex(runner);
    else await createSqliteSearch(runner);
  }

  async down(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    if (postgres) await runner.query('DROP INDEX IF EXISTS ix_events_payload_trgm');
    else {
      for (const trigger of ['events_search_insert', 'events_search_delete', 'events_search_update']) await runner.query(`DROP TRIGGER ${trigger}`);
      await runner.query('DROP TABLE events_search');
    }
    const added = ['ix_events_payload_live', 'ix_events_created', 'ix_events_org_unsigned_created', 'ix_events_org_source_status_created'];
    for (const index of [...added, 'ix_events_org_status_created', 'ix_events_org_source_created']) {
      await runner.query(`DROP INDEX ${index}`);
    }
    await runner.query('CREATE INDEX ix_events_org_source_created ON events (org_id, source_id, created_at)');
    await runner.query('CREATE INDEX ix_events_org_status_created ON events (org_id, status, created_at)');
    await runner.query('ALTER TABLE events DROP COLUMN payload_sealed');
  }
}

/**
 * A trigram index makes `payload_text ILIKE '%term%'` an index search. Creating the extension needs a
 * privilege the relay's database user may not have: without it search still works, by scanning.
 */
async function createTrigramIndex(runner: QueryRunner): Promise<void> {
  if (await installPgTrgm(runner)) await runner.query('CREATE INDEX ix_events_payload_trgm ON events USING gin (payload_text gin_trgm_ops)');
}

/** Whether pg_trgm is installed, installing it where the user may; a refusal leaves the transaction usable. */
export async function installPgTrgm(runner: QueryRunner): Promise<boolean> {
  const installed = async () => (await runner.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).length > 0;
  if (!(await installed())) {
    // A failed statement aborts the migration's transaction; the savepoint keeps it usable.
    await runner.query('SAVEPOINT relay_pg_trgm');
    try {
      await runner.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await runner.query('RELEASE SAVEPOINT relay_pg_trgm');
    } catch {
      await runner.query('ROLLBACK TO SAVEPOINT relay_pg_trgm');
    }
  }
  return installed();
}

/** A contentless FTS5 table with the trigram tokenizer: case-insensitive substring search by index. */
async function createSqliteSearch(runner: QueryRunner): Promise<void> {
  await runner.query("CREATE VIRTUAL TABLE events_search USING fts5(payload_text, content='', contentless_delete=1, tokenize='trigram')");
  await createSqliteSearchTriggers(runner);
  await runner.query('INSERT INTO events_search (rowid, payload_text) SELECT rowid, payload_text FROM events WHERE payload_text IS NOT NULL');
}

/** The triggers that kept the index with every insert, delete and text update of `events` (0012 takes the insert's out). */
export async function createSqliteSearchTriggers(runner: Pick<QueryRunner, 'query'>): Promise<void> {
  await runner.query(`CREATE TRIGGER events_search_insert AFTER INSERT ON events WHEN new.payload_text IS NOT NULL BEGIN
    INSERT INTO events_search (rowid, payload_text) VALUES (new.rowid, new.payload_text);
  END`);
  await runner.query(`CREATE TRIGGER events_search_delete AFTER DELETE ON events WHEN old.payload_text IS NOT NULL BEGIN
    DELETE FROM events_search WHERE rowid = old.rowid;
  END`);
  await runner.query(`CREATE TRIGGER events_search_update AFTER UPDATE OF payload_text ON events BEGIN
    DELETE FROM events_search WHERE rowid = old.rowid;
    INSERT INTO events_search (rowid, payload_text) SELECT new.rowid, new.payload_text WHERE new.payload_text IS NOT NULL;
  END`);
}
