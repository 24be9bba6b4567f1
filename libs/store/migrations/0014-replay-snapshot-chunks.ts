import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 19 follow-up: a replay job's snapshot of event ids is copied by its runner a chunk at a time,
 * after the create has answered, instead of in the create's transaction. The job keeps the newest
 * matching event at creation (`snapshot_until_*`, the bound that fixes its events) and how far the copy
 * got (`snapshot_after_*`, a keyset place in the event list's order). `snapshot_until_id` is null once
 * the copy is done, as for every job created before this migration (copied at once).
 *
 * Plain `ALTER TABLE ... ADD COLUMN` only: on SQLite a TypeORM column change rebuilds the table (see 0004).
 */
export class ReplaySnapshotChunks1795305600013 implements MigrationInterface {
  name = 'ReplaySnapshotChunks1795305600013';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE replays ADD COLUMN snapshot_until_created_at bigint');
    await runner.query('ALTER TABLE replays ADD COLUMN snapshot_until_id varchar(40)');
    await runner.query('ALTER TABLE replays ADD COLUMN snapshot_after_created_at bigint');
    await runner.query('ALTER TABLE replays ADD COLUMN snapshot_after_id varchar(40)');
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const column of ['snapshot_after_id', 'snapshot_after_created_at', 'snapshot_until_id', 'snapshot_until_created_at']) {
      await runner.query(`ALTER TABLE replays DROP COLUMN ${column}`);
    }
  }
}
