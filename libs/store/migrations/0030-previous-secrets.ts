import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 58 (#4), rotation with overlap: a source's previous verification secret and a destination's
 * previous signing secret, sealed like the current ones, and when their grace ends. Until then a source
 * accepts signatures of either, and deliveries carry both signatures; the janitor deletes them after.
 * Plain `ADD COLUMN`: a TypeORM column change on SQLite rebuilds the table from the columns it loaded
 * earlier in the run, which dropped 0027's `auto_disable_after_seconds` (added with plain SQL).
 */
export class PreviousSecrets1795305600029 implements MigrationInterface {
  name = 'PreviousSecrets1795305600029';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE destinations ADD COLUMN previous_signing_secret_sealed text');
    await runner.query('ALTER TABLE destinations ADD COLUMN previous_signing_secret_expires_at bigint');
    await runner.query('ALTER TABLE sources ADD COLUMN previous_secret_sealed text');
    await runner.query('ALTER TABLE sources ADD COLUMN previous_secret_expires_at bigint');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE sources DROP COLUMN previous_secret_expires_at');
    await runner.query('ALTER TABLE sources DROP COLUMN previous_secret_sealed');
    await runner.query('ALTER TABLE destinations DROP COLUMN previous_signing_secret_expires_at');
    await runner.query('ALTER TABLE destinations DROP COLUMN previous_signing_secret_sealed');
  }
}
