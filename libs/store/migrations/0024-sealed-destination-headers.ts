import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Issue 53 (#7): a destination's header values are secrets, sealed as one JSON map in `headers_sealed`.
 * SQL cannot seal (the key is the relay's, not the database's): the api role seals the rows written
 * before at its start (`sealPlainHeaders`), and reads take `headers` while `headers_sealed` is null.
 */
export class SealedDestinationHeaders1795305600023 implements MigrationInterface {
  name = 'SealedDestinationHeaders1795305600023';

  async up(runner: QueryRunner): Promise<void> {
    await runner.addColumn('destinations', new TableColumn({ name: 'headers_sealed', type: 'text', isNullable: true }));
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropColumn('destinations', 'headers_sealed');
  }
}
