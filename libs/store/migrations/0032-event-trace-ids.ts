import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 60: each event's W3C trace id (32 hex digits), as the router read it from the ingest record's
 * `traceparent`; null for events stored before traces. Plain `ADD COLUMN`: on SQLite a TypeORM column
 * change rebuilds the table (see 0004).
 */
export class EventTraceIds1795305600031 implements MigrationInterface {
  name = 'EventTraceIds1795305600031';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE events ADD COLUMN trace_id varchar(32)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE events DROP COLUMN trace_id');
  }
}
