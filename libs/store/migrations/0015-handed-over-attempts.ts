import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 16: `handed_over_attempts`, the relay.fresh jobs a deliverer attempted after handing them over
 * (libs/store/handed-over-attempts.ts), so that a copy read by any other deliverer is dropped too.
 * Keyed by `<deliveryId>:<attemptNumber>`; `attempted_at` for the janitor's purge.
 */
export class HandedOverAttempts1795305600014 implements MigrationInterface {
  name = 'HandedOverAttempts1795305600014';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE handed_over_attempts (job_key varchar(80) PRIMARY KEY, attempted_at bigint NOT NULL)');
    await runner.query('CREATE INDEX ix_handed_over_attempts_at ON handed_over_attempts (attempted_at)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE handed_over_attempts');
  }
}
