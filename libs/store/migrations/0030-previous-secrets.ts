import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Issue 58 (#4), rotation with overlap: a source's previous verification secret and a destination's
 * previous signing secret, sealed like the current ones, and when their grace ends. Until then a source
 * accepts signatures of either, and deliveries carry both signatures; the janitor deletes them after.
 */
export class PreviousSecrets1795305600029 implements MigrationInterface {
  name = 'PreviousSecrets1795305600029';

  async up(runner: QueryRunner): Promise<void> {
    await runner.addColumns('destinations', [
      new TableColumn({ name: 'previous_signing_secret_sealed', type: 'text', isNullable: true }),
      new TableColumn({ name: 'previous_signing_secret_expires_at', type: 'bigint', isNullable: true }),
    ]);
    await runner.addColumns('sources', [
      new TableColumn({ name: 'previous_secret_sealed', type: 'text', isNullable: true }),
      new TableColumn({ name: 'previous_secret_expires_at', type: 'bigint', isNullable: true }),
    ]);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropColumn('sources', 'previous_secret_expires_at');
    await runner.dropColumn('sources', 'previous_secret_sealed');
    await runner.dropColumn('destinations', 'previous_signing_secret_expires_at');
    await runner.dropColumn('destinations', 'previous_signing_secret_sealed');
  }
}
