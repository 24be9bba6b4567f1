import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why an event ended `failed` without being delivered: its record could not be handled (a poison record,
 * dead-lettered). Plain `ALTER TABLE`, as every change to `events` (see 0004).
 */
export class PoisonRecords1795305600006 implements MigrationInterface {
  name = 'PoisonRecords1795305600006';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE events ADD COLUMN failure_reason text NULL');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE events DROP COLUMN failure_reason');
  }
}
