import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

const col = (name: string, type: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({ name, type, ...extra });
const id = (name = 'id') => col(name, 'varchar', { length: '40', isPrimary: name === 'id' });
const ref = (name: string) => col(name, 'varchar', { length: '40' });
const ms = (name: string, isNullable = false) => col(name, 'bigint', { isNullable });
const int = (name: string, isNullable = false) => col(name, 'integer', { isNullable });
const text = (name: string, isNullable = false) => col(name, 'text', { isNullable });
const cascade = (column: string, table: string) => ({ columnNames: [column], referencedTableName: table, referencedColumnNames: ['id'], onDelete: 'CASCADE' });

/** Events, their deliveries (one per destination and replay) and every attempt of each. */
export class Pipeline1795305600002 implements MigrationInterface {
  name = 'Pipeline1795305600002';

  async up(runner: QueryRunner): Promise<void> {
    const bytes = runner.connection.options.type === 'postgres' ? 'bytea' : 'blob';
    await runner.createTable(
      new Table({
        name: 'events',
        columns: [
          id(),
          ref('org_id'),
          ref('source_id'),
          col('status', 'varchar', { length: '16' }),
          text('headers'),
          col('content_type', 'varchar', { length: '255', isNullable: true }),
          col('payload', bytes, { isNullable: true }),
          text('payload_text', true),
          int('payload_size'),
          col('payload_hash', 'varchar', { length: '80' }),
          col('signature_valid', 'boolean'),
          col('client_ip', 'varchar', { length: '64', isNullable: true }),
          ms('received_at'),
          ms('validated_at'),
          ms('queued_at'),
          ms('created_at'),
          ms('payload_expired_at', true),
          int('deliveries_count'),
          int('deliveries_succeeded'),
          int('deliveries_failed'),
        ],
        indices: [
          { name: 'ix_events_org_created', columnNames: ['org_id', 'created_at', 'id'] },
          { name: 'ix_events_org_source_created', columnNames: ['org_id', 'source_id', 'created_at'] },
          { name: 'ix_events_org_status_created', columnNames: ['org_id', 'status', 'created_at'] },
          { name: 'ix_events_source', columnNames: ['source_id'] },
        ],
        foreignKeys: [cascade('source_id', 'sources')],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'deliveries',
        columns: [
          id(),
          ref('org_id'),
          ref('event_id'),
          // No foreign key: a deleted destination keeps its delivery history.
          ref('destination_id'),
          col('destination_name', 'varchar', { length: '200' }),
          col('status', 'varchar', { length: '16' }),
          int('attempt_count'),
          int('last_status_code', true),
          text('last_error', true),
          int('latency_ms', true),
          ms('next_attempt_at', true),
          ms('delivered_at', true),
          ms('created_at'),
          ms('updated_at'),
        ],
        indices: [
          { name: 'ix_deliveries_event', columnNames: ['event_id'] },
          { name: 'ix_deliveries_destination_created', columnNames: ['destination_id', 'created_at'] },
          { name: 'ix_deliveries_status', columnNames: ['status', 'updated_at'] },
        ],
        foreignKeys: [cascade('event_id', 'events')],
      }),
    );
    await runner.createTable(
      new Table({
        name: 'attempts',
        columns: [
          id(),
          ref('org_id'),
          ref('delivery_id'),
          ref('event_id'),
          ref('destination_id'),
          int('attempt_number'),
          ms('started_at'),
          ms('completed_at'),
          col('ok', 'boolean'),
          int('status_code', true),
          int('latency_ms'),
          text('error', true),
          col('error_kind', 'varchar', { length: '32', isNullable: true }),
          text('response_body'),
        ],
        indices: [
          { name: 'ix_attempts_delivery', columnNames: ['delivery_id', 'attempt_number'] },
          { name: 'ix_attempts_destination_started', columnNames: ['destination_id', 'started_at'] },
          { name: 'ix_attempts_event', columnNames: ['event_id'] },
        ],
        foreignKeys: [cascade('delivery_id', 'deliveries')],
      }),
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['attempts', 'deliveries', 'events']) await runner.dropTable(table);
  }
}
