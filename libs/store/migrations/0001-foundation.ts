import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

const id = (): TableColumnOptions => ({ name: 'id', type: 'varchar', length: '40', isPrimary: true });
const ref = (name: string): TableColumnOptions => ({ name, type: 'varchar', length: '40' });
const ms = (name: string, isNullable = false): TableColumnOptions => ({ name, type: 'bigint', isNullable });
const text = (name: string, isNullable = false): TableColumnOptions => ({ name, type: 'text', isNullable });
const varchar = (name: string, length: number, isNullable = false): TableColumnOptions => ({
  name,
  type: 'varchar',
  length: String(length),
  isNullable,
});
const bool = (name: string): TableColumnOptions => ({ name, type: 'boolean' });
const int = (name: string, isNullable = false): TableColumnOptions => ({ name, type: 'integer', isNullable });
const cascadeTo = (column: string, table: string) => ({
  columnNames: [column],
  referencedTableName: table,
  referencedColumnNames: ['id'],
  onDelete: 'CASCADE',
});

/** Organizations, API keys, sources, destinations and routes. */
export class Foundation1795305600000 implements MigrationInterface {
  name = 'Foundation1795305600000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.createTable(
      new Table({
        name: 'organizations',
        columns: [id(), varchar('slug', 64), varchar('plan', 16), ms('created_at')],
        indices: [{ name: 'ux_organizations_slug', columnNames: ['slug'], isUnique: true }],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'api_keys',
        columns: [id(), ref('org_id'), varchar('key_hash', 64), varchar('name', 200), ms('created_at'), ms('last_used_at', true)],
        indices: [{ name: 'ux_api_keys_hash', columnNames: ['key_hash'], isUnique: true }],
        foreignKeys: [cascadeTo('org_id', 'organizations')],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'sources',
        columns: [
          id(),
          ref('org_id'),
          varchar('name', 200),
          varchar('slug', 100),
          text('description', true),
          varchar('provider', 16, true),
          text('verification'),
          text('secret_sealed', true),
          bool('reject_invalid_signatures'),
          int('rate_limit_per_minute', true),
          varchar('ip_filter_mode', 16),
          text('ip_allowlist'),
          text('ip_denylist'),
          text('encrypt_fields'),
          text('mask_fields'),
          bool('dedup_enabled'),
          varchar('dedup_strategy', 20),
          int('dedup_window_hours'),
          varchar('dedup_custom_header', 200, true),
          bool('enabled'),
          int('events_count'),
          ms('last_event_at', true),
          ms('created_at'),
          ms('updated_at'),
        ],
        indices: [{ name: 'ux_sources_org_slug', columnNames: ['org_id', 'slug'], isUnique: true }],
        foreignKeys: [cascadeTo('org_id', 'organizations')],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'destinations',
        columns: [
          id(),
          ref('org_id'),
          varchar('name', 200),
          varchar('slug', 100),
          varchar('url', 2048),
          varchar('method', 8),
          text('description', true),
          text('headers'),
          varchar('auth_type', 16),
          text('auth_config_sealed', true),
          text('signing_secret_sealed'),
          int('timeout_ms'),
          int('rate_limit_per_minute', true),
          text('retry_policy'),
          bool('enabled'),
          ms('created_at'),
          ms('updated_at'),
        ],
        indices: [{ name: 'ux_destinations_org_slug', columnNames: ['org_id', 'slug'], isUnique: true }],
        foreignKeys: [cascadeTo('org_id', 'organizations')],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'routes',
        columns: [id(), ref('org_id'), ref('source_id'), ref('destination_id'), bool('enabled'), ms('created_at')],
        indices: [
          { name: 'ux_routes_pair', columnNames: ['source_id', 'destination_id'], isUnique: true },
          { name: 'ix_routes_destination', columnNames: ['destination_id'] },
          { name: 'ix_routes_org', columnNames: ['org_id', 'id'] },
        ],
        foreignKeys: [cascadeTo('org_id', 'organizations'), cascadeTo('source_id', 'sources'), cascadeTo('destination_id', 'destinations')],
      }),
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['routes', 'destinations', 'sources', 'api_keys', 'organizations']) await runner.dropTable(table);
  }
}
