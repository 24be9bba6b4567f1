import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * API keys gain a scope (`admin`, `write`, `read`) and the first 8 characters of the key, shown in listings.
 * Keys made before have full power (`admin`); their prefix was never kept, so it stays null.
 */
export class ApiKeyScopes1795305600008 implements MigrationInterface {
  name = 'ApiKeyScopes1795305600008';

  async up(runner: QueryRunner): Promise<void> {
    await runner.addColumns('api_keys', [
      new TableColumn({ name: 'scope', type: 'varchar', length: '16', default: "'admin'" }),
      new TableColumn({ name: 'prefix', type: 'varchar', length: '8', isNullable: true }),
    ]);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropColumns('api_keys', ['scope', 'prefix']);
  }
}
