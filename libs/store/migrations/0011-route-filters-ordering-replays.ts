import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Issue 19: destinations that are gone (why and when a destination was disabled); route filters (the
 * filter, the ingest path and query they read, and the routes that filtered each event out); replay
 * jobs by query, each with the snapshot of the event ids it matched; ordered delivery (a destination's
 * `ordering`, the delivery at the head of each source's line to it, and the jobs waiting behind it).
 *
 * Plain `ALTER TABLE ... ADD COLUMN` only: on SQLite a TypeORM column change rebuilds the table (see 0004).
 */
export class RouteFiltersOrderingReplays1795305600010 implements MigrationInterface {
  name = 'RouteFiltersOrderingReplays1795305600010';

  async up(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    await runner.query('ALTER TABLE destinations ADD COLUMN disabled_reason varchar(16)');
    await runner.query('ALTER TABLE destinations ADD COLUMN disabled_at bigint');
    await runner.query(`ALTER TABLE destinations ADD COLUMN ordering varchar(8) NOT NULL DEFAULT 'none'`);
    await runner.query('ALTER TABLE routes ADD COLUMN filter text');
    await runner.query('ALTER TABLE events ADD COLUMN ingest_path varchar(300)');
    await runner.query('ALTER TABLE events ADD COLUMN ingest_query text');
    await runner.query('ALTER TABLE events ADD COLUMN filtered_route_ids text');
    await runner.createTable(
      new Table({
        name: 'replays',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'org_id', type: 'varchar', length: '40' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'filter', type: 'text' },
          { name: 'destination_ids', type: 'text', isNullable: true },
          { name: 'max_per_second', type: 'integer' },
          { name: 'matched', type: 'integer' },
          { name: 'replayed', type: 'integer', default: 0 },
          { name: 'skipped', type: 'integer', default: 0 },
          // The last snapshot event id replayed: the job goes on after it.
          { name: 'cursor_event_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'error', type: 'text', isNullable: true },
          // Which runner works the job, until when (a runner that died lets it go when this passes).
          { name: 'lease_owner', type: 'varchar', length: '40', isNullable: true },
          { name: 'lease_until', type: 'bigint', isNullable: true },
          { name: 'created_at', type: 'bigint' },
          { name: 'finished_at', type: 'bigint', isNullable: true },
        ],
        foreignKeys: [{ columnNames: ['org_id'], referencedTableName: 'organizations', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'ix_replays_org_created', columnNames: ['org_id', 'created_at', 'id'] },
          { name: 'ix_replays_status', columnNames: ['status'] },
        ],
      }),
    );
    // A job's snapshot is written in one statement while the API waits (100,000 rows within a second), so
    // no foreign keys (a lookup per row; the job drops its rows when it ends, an event deleted meanwhile
    // is skipped); on SQLite the rows are the primary key's B-tree (WITHOUT ROWID: one write per row, not
    // two), on PostgreSQL the ids compare bytewise (collation "C"; ULIDs sort alike), not by locale.
    await runner.query(
      postgres
        ? 'CREATE TABLE replay_events (replay_id varchar(40) COLLATE "C" NOT NULL, event_id varchar(40) COLLATE "C" NOT NULL, PRIMARY KEY (replay_id, event_id))'
        : 'CREATE TABLE replay_events (replay_id varchar(40) NOT NULL, event_id varchar(40) NOT NULL, PRIMARY KEY (replay_id, event_id)) WITHOUT ROWID',
    );
    // Per destination and source: the one delivery that may be sent (null: none, the next comes first).
    await runner.createTable(
      new Table({
        name: 'ordered_heads',
        columns: [
          { name: 'destination_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'source_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'head_delivery_id', type: 'varchar', length: '40', isNullable: true },
          // The line's deliveries are created in its order (time-sortable ids): any id up to this one is done.
          { name: 'last_done_delivery_id', type: 'varchar', length: '40', isNullable: true },
        ],
      }),
    );
    // The jobs behind a head, as their records were (body byte-exact), until the head is done.
    await runner.createTable(
      new Table({
        name: 'ordered_waiting',
        columns: [
          { name: 'delivery_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'destination_id', type: 'varchar', length: '40' },
          { name: 'source_id', type: 'varchar', length: '40' },
          { name: 'job', type: 'text' },
          { name: 'body', type: postgres ? 'bytea' : 'blob' },
        ],
        indices: [{ name: 'ix_ordered_waiting_line', columnNames: ['destination_id', 'source_id', 'delivery_id'] }],
      }),
    );
    // Destinations disabled before this migration were disabled by hand.
    await runner.query(`UPDATE destinations SET disabled_reason = 'manual', disabled_at = updated_at WHERE enabled = ${postgres ? 'false' : '0'}`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropTable('ordered_waiting');
    await runner.dropTable('ordered_heads');
    await runner.query('ALTER TABLE destinations DROP COLUMN ordering');
    await runner.dropTable('replay_events');
    await runner.dropTable('replays');
    for (const column of ['filtered_route_ids', 'ingest_query', 'ingest_path']) await runner.query(`ALTER TABLE events DROP COLUMN ${column}`);
    await runner.query('ALTER TABLE routes DROP COLUMN filter');
    await runner.query('ALTER TABLE destinations DROP COLUMN disabled_at');
    await runner.query('ALTER TABLE destinations DROP COLUMN disabled_reason');
  }
}
