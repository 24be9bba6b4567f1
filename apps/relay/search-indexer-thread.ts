import { openSqlClient } from '../../libs/store/sql-client.js';
import { buildSearchIndexerRole } from '../router/search-indexer-role.js';
import { storeOptions } from './thread-parts.js';
import { runThread } from './thread-body.js';

/**
 * The search indexer's thread (pipeline-threads.ts starts it beside the pipeline threads): indexing is
 * off the router's transactions already, and here it is off the thread that routes and delivers too
 * (on SQLite it was about a third of that thread's work). The role is built by the builder the role
 * table uses, over only a store connection: it reads and writes nothing else.
 */
await runThread(async ({ config, logger, metrics, closers }) => {
  // The main thread's store connection checkpoints the file, and outlives this thread.
  const sql = openSqlClient({ ...storeOptions(config, logger), checkpoints: false });
  closers.push(() => sql.close());
  const role = await buildSearchIndexerRole({ store: { sql }, metrics, logger });
  closers.push(() => role.stop());
  await role.start();
});
