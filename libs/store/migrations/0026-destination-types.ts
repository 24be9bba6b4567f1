import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Issue 59: destinations beyond HTTP. `type` (`http` for every row written before) and `target_sealed`,
 * the queue target as sealed JSON: its URL and `sasl.password` carry credentials
 * (docs/decisions/0074-queue-destinations.md). An HTTP row keeps `url` and has no target.
 */
export class DestinationTypes1795305600025 implements MigrationInterface {
  name = 'DestinationTypes1795305600025';

  async up(runner: QueryRunner): Promise<void> {
    await runner.addColumn('destinations', new TableColumn({ name: 'type', type: 'varchar', length: '16', isNullable: false, default: "'http'" }));
    await runner.addColumn('destinations', new TableColumn({ name: 'target_sealed', type: 'text', isNullable: true }));
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropColumn('destinations', 'target_sealed');
    await runner.dropColumn('destinations', 'type');
  }
}
