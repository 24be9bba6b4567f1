import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Dedup keys claimed at ingest, and shared rate-limit windows for gateways on PostgreSQL. */
export class Ingest1795305600001 implements MigrationInterface {
  name = 'Ingest1795305600001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.createTable(
      new Table({
        name: 'dedup_keys',
        columns: [
          { name: 'source_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'dedup_key', type: 'varchar', length: '300', isPrimary: true },
          { name: 'event_id', type: 'varchar', length: '40' },
          { name: 'expires_at', type: 'bigint' },
        ],
        indices: [{ name: 'ix_dedup_keys_expiry', columnNames: ['expires_at'] }],
        foreignKeys: [{ columnNames: ['source_id'], referencedTableName: 'sources', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'rate_windows',
        columns: [
          { name: 'bucket', type: 'varchar', length: '120', isPrimary: true },
          { name: 'window_start', type: 'bigint', isPrimary: true },
          { name: 'hits', type: 'integer' },
        ],
        indices: [{ name: 'ix_rate_windows_start', columnNames: ['window_start'] }],
      }),
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropTable('rate_windows');
    await runner.dropTable('dedup_keys');
  }
}
