import type { Infrastructure, Role, RoleBuilder } from '../../libs/roles/role.js';
import type { Store } from '../../libs/store/store.js';
import { createSearchIndexer } from './search-indexer.js';

/** All the search indexer needs: a store connection (its thread opens only that), metrics and a logger. */
export type SearchIndexerInfrastructure = Pick<Infrastructure, 'metrics' | 'logger'> & { store: Pick<Store, 'sql'> };

/**
 * Indexes what the router stored for search, behind its inserts, never inside them (docs/decisions/0046-search-behind-the-insert.md);
 * part of the router role, in a module of its own so that its thread loads
 * only what indexing needs. A process of role `all` with pipeline threads runs it on a thread of its own
 * instead (apps/relay/search-indexer-thread.ts), built by this same builder.
 */
export const buildSearchIndexerRole: RoleBuilder<Role, SearchIndexerInfrastructure> = ({ store, metrics, logger }) => {
  const searchIndexer = createSearchIndexer({ sql: store.sql, lag: metrics.searchIndexLag, logger });
  return {
    name: 'search indexer',
    start: async () => searchIndexer.start(),
    stop: () => searchIndexer.stop(),
  };
};
