import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 15: SQLite's FTS5 index merges its segments less often. FTS5 merges a level's segments into one
 * once `automerge` of them exist (default 4); at 16 (its largest) the indexer's inserts do about a third
 * less merging work for the same index, and a search reads a few more segments (docs/decisions/0048-sqlite-search-index-layout.md). The setting is stored in the index itself, so a rebuild keeps it. PostgreSQL: no change.
 */
export class SearchIndexAutomerge1795305600017 implements MigrationInterface {
  name = 'SearchIndexAutomerge1795305600017';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') return;
    await runner.query("INSERT INTO events_search (events_search, rank) VALUES ('automerge', 16)");
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') return;
    await runner.query("INSERT INTO events_search (events_search, rank) VALUES ('automerge', 4)");
  }
}
