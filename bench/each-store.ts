import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRelay, type RunningRelay } from '../apps/relay/relay.js';
import { loadConfig } from '../libs/config/config.js';
import { createLogger } from '../libs/logging/logger.js';
import { createTestDatabase, postgresUnavailableReason } from '../libs/testing/postgres.js';

export type StoreKind = 'sqlite' | 'postgres';

/**
 * For each store named in `list` (`sqlite,postgres`), in turn: a fresh relay (`env` on top of a temp
 * data dir and, for PostgreSQL, a fresh database) for `bench`, closed and removed after it. PostgreSQL
 * is skipped, with why, when it cannot be reached.
 */
export async function forEachStoreRelay(list: string, env: Record<string, string>, bench: (relay: RunningRelay, store: StoreKind) => Promise<void>): Promise<void> {
  for (const store of list.split(',') as StoreKind[]) {
    if (store === 'postgres') {
      const reason = await postgresUnavailableReason();
      if (reason) {
        console.log(`[postgres] skipped: ${reason}`);
        continue;
      }
    }
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-bench-'));
    const database = store === 'postgres' ? await createTestDatabase() : undefined;
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', RELAY_DATA_DIR: dataDir, DATABASE_URL: database?.url, ...env });
    const relay = await startRelay(config, { logger: createLogger({ level: 'silent' }) });
    try {
      await bench(relay, store);
    } finally {
      await relay.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
}
