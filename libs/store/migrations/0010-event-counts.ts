import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `event_counts`: how many events each (organization, source, status) holds, kept by triggers on `events`,
 * so every writer (router, recorder, replay, deletes, source cascades, retention) keeps it in step without
 * knowing it. It answers list totals and a source's `eventsCount`, which replaces `sources.events_count`
 * (a counter the router raised and nothing lowered).
 *
 * SQLite has one writer at a time: one row per key, updated in place. PostgreSQL has concurrent writers
 * (recorder batches, routers, the janitor), and one hot row per key would make them queue on its lock and
 * deadlock when two transactions touch two keys in opposite orders; there, the triggers append signed
 * deltas, a read sums them, and `foldEventCounts` (libs/store/event-counts.ts) folds them into one row per
 * key. Inserts and deletes add one delta per key per statement (transition tables), so a retention batch or
 * a source's cascade adds a few rows, not one per event.
 */
export class EventCounts1795305600009 implements MigrationInterface {
  name = 'EventCounts1795305600009';

  async up(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    await runner.query(`CREATE TABLE event_counts (
      org_id varchar(40) NOT NULL, source_id varchar(40) NOT NULL, status varchar(16) NOT NULL, n ${postgres ? 'bigint' : 'integer'} NOT NULL)`);
    await runner.query(`CREATE ${postgres ? '' : 'UNIQUE '}INDEX ix_event_counts_key ON event_counts (org_id, source_id, status)`);
    await runner.query('INSERT INTO event_counts (org_id, source_id, status, n) SELECT org_id, source_id, status, COUNT(*) FROM events GROUP BY org_id, source_id, status');
    if (postgres) await createDeltaTriggers(runner);
    else await createCounterTriggers(runner);
    await runner.query('ALTER TABLE sources DROP COLUMN events_count');
  }

  async down(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    await runner.query('ALTER TABLE sources ADD COLUMN events_count integer NOT NULL DEFAULT 0');
    await runner.query('UPDATE sources SET events_count = (SELECT COALESCE(SUM(n), 0) FROM event_counts c WHERE c.source_id = sources.id)');
    for (const trigger of ['event_counts_insert', 'event_counts_delete', 'event_counts_update']) {
      await runner.query(`DROP TRIGGER ${trigger}${postgres ? ' ON events' : ''}`);
    }
    if (postgres) for (const fn of ['event_counts_inserted', 'event_counts_deleted', 'event_counts_updated']) await runner.query(`DROP FUNCTION ${fn}()`);
    await runner.query('DROP TABLE event_counts');
  }
}

async function createCounterTriggers(runner: QueryRunner): Promise<void> {
  const add = (row: 'new' | 'old', delta: string) => `INSERT INTO event_counts (org_id, source_id, status, n) VALUES (${row}.org_id, ${row}.source_id, ${row}.status, ${delta})
      ON CONFLICT (org_id, source_id, status) DO UPDATE SET n = n + ${delta};`;
  await runner.query(`CREATE TRIGGER event_counts_insert AFTER INSERT ON events BEGIN ${add('new', '1')} END`);
  await runner.query(`CREATE TRIGGER event_counts_delete AFTER DELETE ON events BEGIN ${add('old', '-1')} END`);
  await runner.query(`CREATE TRIGGER event_counts_update AFTER UPDATE OF status ON events WHEN old.status <> new.status BEGIN
    ${add('old', '-1')}
    ${add('new', '1')}
  END`);
}

async function createDeltaTriggers(runner: QueryRunner): Promise<void> {
  const append = (select: string) => `BEGIN
      INSERT INTO event_counts (org_id, source_id, status, n)
        SELECT org_id, source_id, status, SUM(n) FROM (${select}) AS delta GROUP BY org_id, source_id, status HAVING SUM(n) <> 0;
      RETURN NULL;
    END`;
  await runner.query(`CREATE FUNCTION event_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    ${append('SELECT org_id, source_id, status, 1 AS n FROM inserted_events')} $$`);
  await runner.query(`CREATE FUNCTION event_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    ${append('SELECT org_id, source_id, status, -1 AS n FROM deleted_events')} $$`);
  // Per row, and only for a changed status: a statement-level trigger would copy every updated row (the
  // retention's payload expiry included) into transition tables to find the few whose status moved.
  await runner.query(`CREATE FUNCTION event_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO event_counts (org_id, source_id, status, n) VALUES (OLD.org_id, OLD.source_id, OLD.status, -1), (NEW.org_id, NEW.source_id, NEW.status, 1);
      RETURN NULL;
    END $$`);
  await runner.query(`CREATE TRIGGER event_counts_insert AFTER INSERT ON events REFERENCING NEW TABLE AS inserted_events
    FOR EACH STATEMENT EXECUTE FUNCTION event_counts_inserted()`);
  await runner.query(`CREATE TRIGGER event_counts_delete AFTER DELETE ON events REFERENCING OLD TABLE AS deleted_events
    FOR EACH STATEMENT EXECUTE FUNCTION event_counts_deleted()`);
  await runner.query(`CREATE TRIGGER event_counts_update AFTER UPDATE OF status ON events
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION event_counts_updated()`);
}
