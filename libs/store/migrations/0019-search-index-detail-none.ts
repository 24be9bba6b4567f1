import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Stored events up to which the migration changes the index's layout itself (see below). */
const CHANGED_HERE_UP_TO = 50_000;

/**
 * Issue 15: SQLite's FTS5 index keeps which events hold each trigram, no longer where in them
 * (`detail=none`): indexing costs about 30% less CPU and the index takes about a fifth of the disk. A term
 * is looked up as all of its trigrams rather than as their phrase, and each event found is checked for
 * the term itself (libs/store/search-index.ts), which answers alike over either layout.
 *
 * The new layout starts empty with every stored event unindexed; the search indexer fills it again,
 * oldest first, while searches read the unindexed events' own text meanwhile. That reading is a scan on
 * the API's thread, so the migration changes the layout only of an index of at most 50,000 events (a
 * scan of well under a second while the indexer catches up in seconds); a larger one keeps its layout
 * until `relay search rebuild`, run when searches may be slow for a while, recreates it in this one.
 * PostgreSQL: no change.
 */
export class SearchIndexDetailNone1795305600018 implements MigrationInterface {
  name = 'SearchIndexDetailNone1795305600018';

  async up(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type === 'postgres') return;
    const [row] = (await runner.query('SELECT COUNT(*) AS n FROM (SELECT 1 FROM events WHERE payload_text IS NOT NULL LIMIT ?)', [CHANGED_HERE_UP_TO + 1])) as { n: number }[];
    if (Number(row?.n) <= CHANGED_HERE_UP_TO) await recreateSqliteSearchIndex((sql) => runner.query(sql));
  }

  async down(runner: QueryRunner): Promise<void> {
    if (runner.connection.options.type !== 'postgres') await recreateSqliteSearchIndex((sql) => runner.query(sql), 'full');
  }
}

/**
 * Empties the index into this layout (the contentless trigram table, under the same name so the delete
 * and expiry triggers still reach it) and marks every stored event unindexed. Also `relay search rebuild`'s.
 */
export async function recreateSqliteSearchIndex(run: (sql: string) => Promise<unknown>, detail: 'none' | 'full' = 'none'): Promise<void> {
  await run('DROP TABLE events_search');
  await run(`CREATE VIRTUAL TABLE events_search USING fts5(payload_text, content='', contentless_delete=1, detail=${detail}, tokenize='trigram')`);
  await run("INSERT INTO events_search (events_search, rank) VALUES ('automerge', 16)");
  await run('UPDATE search_index_state SET indexed_through = 0');
}
