import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The dedup journal of the embedded mode's one gateway (libs/store/dedup-journal.ts): rows appended in id
 * order, no index by key. No foreign key: a deleted source's rows expire and are purged like any other.
 */
export class DedupJournal1795305600005 implements MigrationInterface {
  name = 'DedupJournal1795305600005';

  async up(runner: QueryRunner): Promise<void> {
    // SQLite makes exactly `integer` primary keys the row id, so appends in id order stay one B-tree.
    const idType = runner.connection.driver.options.type === 'postgres' ? 'bigint' : 'integer';
    await runner.createTable(
      new Table({
        name: 'dedup_journal',
        columns: [
          { name: 'id', type: idType, isPrimary: true },
          { name: 'fp', type: 'bigint' },
          { name: 'source_id', type: 'varchar', length: '40' },
          { name: 'dedup_key', type: 'varchar', length: '300' },
          { name: 'event_id', type: 'varchar', length: '40' },
          { name: 'expires_at', type: 'bigint' },
        ],
        indices: [{ name: 'ix_dedup_journal_expiry', columnNames: ['expires_at'] }],
      }),
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.dropTable('dedup_journal');
  }
}
