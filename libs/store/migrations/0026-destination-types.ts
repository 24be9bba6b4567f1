import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 59: destinations beyond HTTP. `type` (`http` for every row written before) and `target_sealed`,
 * the queue target as sealed JSON: its URL and `sasl.password` carry credentials
 * (docs/decisions/0074-queue-destinations.md). An HTTP row keeps `url` and has no target. Plain `ADD
 * COLUMN`: on SQLite a TypeORM column change rebuilds the table from the columns it loaded earlier in the
 * run, and would drop a column a later migration added with plain SQL (see 0004).
 */
export class DestinationTypes1795305600025 implements MigrationInterface {
  name = 'DestinationTypes1795305600025';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query("ALTER TABLE destinations ADD COLUMN type varchar(16) NOT NULL DEFAULT 'http'");
    await runner.query('ALTER TABLE destinations ADD COLUMN target_sealed text');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE destinations DROP COLUMN target_sealed');
    await runner.query('ALTER TABLE destinations DROP COLUMN type');
  }
}
