import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 16: the lanes commit below their first unanswered job instead of copying each job to its
 * destination's topic, so no deliverer asks any more whether a copy's original was attempted, and
 * `handed_over_attempts` (0015) goes.
 */
export class DropHandedOverAttempts1795305600019 implements MigrationInterface {
  name = 'DropHandedOverAttempts1795305600019';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE handed_over_attempts');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE handed_over_attempts (job_key varchar(80) PRIMARY KEY, attempted_at bigint NOT NULL)');
    await runner.query('CREATE INDEX ix_handed_over_attempts_at ON handed_over_attempts (attempted_at)');
  }
}
