import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRelay, type RunningRelay } from '../apps/relay/relay.js';
import { loadConfig } from '../libs/config/config.js';
import { createLogger } from '../libs/logging/logger.js';
import { createTestDatabase, postgresUnavailableReason } from '../libs/testing/postgres.js';
import { TEST_RELAY_ENV } from '../libs/testing/test-relay-env.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface StoreReuse {
  /** An existing data directory (SQLite) to run on and leave in place, instead of a fresh one. */
  sqliteDataDir?: string;
  /** An existing database (PostgreSQL) to run on and leave in place, instead of a fresh one. */
  postgresUrl?: string;
  /** Leave the fresh stores in place after the run (printed), so a later run can reuse them. */
  keep?: boolean;
}

/**
 * For each store named in `list` (`sqlite,postgres`), in turn: a relay (`env` on top of a temp data dir
 * and, for PostgreSQL, a fresh database, or the stores `reuse` names) for `bench`, closed after it; fresh
 * stores are removed unless `reuse.keep`. PostgreSQL is skipped, with why, when it cannot be reached.
 */
export async function forEachStoreRelay(
  list: string,
  env: Record<string, string>,
  bench: (relay: RunningRelay, store: StoreKind) => Promise<void>,
  reuse: StoreReuse = {},
): Promise<void> {
  for (const store of list.split(',') as StoreKind[]) {
    if (store === 'postgres') {
      const reason = await postgresUnavailableReason();
      if (reason) {
        console.log(`[postgres] skipped: ${reason}`);
        continue;
      }
    }
    const dataDir = (store === 'sqlite' && reuse.sqliteDataDir) || fs.mkdtempSync(path.join(os.tmpdir(), 'relay-bench-'));
    const database = store === 'postgres' && !reuse.postgresUrl ? await createTestDatabase() : undefined;
    const databaseUrl = store === 'postgres' ? (reuse.postgresUrl ?? database!.url) : undefined;
    const config = loadConfig({ ...TEST_RELAY_ENV, PORT: '0', HOST: '127.0.0.1', RELAY_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...env });
    const relay = await startRelay(config, { logger: createLogger({ level: 'silent' }) });
    try {
      await bench(relay, store);
    } finally {
      await relay.close();
      if (reuse.keep) console.log(`[${store}] kept: ${store === 'postgres' ? `--postgres-url ${databaseUrl}` : `--sqlite-data-dir ${dataDir}`}`);
      else {
        await database?.drop();
        if (dataDir !== reuse.sqliteDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
}
