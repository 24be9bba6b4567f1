import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Issue 57: transformations (their code and sealed `env`, owned by libs/transformations/transformations.ts),
 * a route's `transformation_id` and `delay_seconds`, and a delivery's `failure_reason` and `transformation`
 * (the report of the transformation its request went through, as JSON). Plain `ALTER TABLE ... ADD COLUMN` on routes: on
 * SQLite a TypeORM column change rebuilds the table (see 0004).
 */
export class TransformationsRouteDelay1795305600024 implements MigrationInterface {
  name = 'TransformationsRouteDelay1795305600024';

  async up(runner: QueryRunner): Promise<void> {
    await runner.createTable(
      new Table({
        name: 'transformations',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'org_id', type: 'varchar', length: '40' },
          { name: 'name', type: 'varchar', length: '200' },
          { name: 'code', type: 'text' },
          // The env object as JSON, sealed whole: every value is a secret.
          { name: 'env', type: 'text' },
          { name: 'created_at', type: 'bigint' },
          { name: 'updated_at', type: 'bigint' },
        ],
        foreignKeys: [{ columnNames: ['org_id'], referencedTableName: 'organizations', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'ux_transformations_org_name', columnNames: ['org_id', 'name'], isUnique: true },
          { name: 'ix_transformations_org_created', columnNames: ['org_id', 'created_at', 'id'] },
        ],
      }),
    );
    await runner.query('ALTER TABLE routes ADD COLUMN transformation_id varchar(40)');
    await runner.query('ALTER TABLE routes ADD COLUMN delay_seconds integer NOT NULL DEFAULT 0');
    await runner.query('CREATE INDEX ix_routes_transformation ON routes (transformation_id)');
    await runner.query('ALTER TABLE deliveries ADD COLUMN failure_reason varchar(32)');
    await runner.query('ALTER TABLE deliveries ADD COLUMN transformation text');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE deliveries DROP COLUMN transformation');
    await runner.query('ALTER TABLE deliveries DROP COLUMN failure_reason');
    await runner.query('DROP INDEX ix_routes_transformation');
    await runner.query('ALTER TABLE routes DROP COLUMN delay_seconds');
    await runner.query('ALTER TABLE routes DROP COLUMN transformation_id');
    await runner.dropTable('transformations');
  }
}
