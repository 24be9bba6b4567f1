import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context } from 'mocha';
import { createTestDatabase, postgresUnavailableReason, type TestDatabase } from './postgres.js';

/** Where a store under test keeps its data: a temp SQLite directory or a fresh PostgreSQL database. */
export interface StoreLocation {
  dataDir: string;
  databaseUrl?: string;
}

export interface StoreTarget {
  name: 'sqlite' | 'postgres';
  /** Prepares an empty location; call `cleanup` in `after`. */
  prepare(this: void, mocha: Context): Promise<StoreLocation & { cleanup(): Promise<void> }>;
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'relay-test-'));
}

const sqlite: StoreTarget = {
  name: 'sqlite',
  async prepare() {
    const dataDir = tempDir();
    return { dataDir, cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  },
};

const postgres: StoreTarget = {
  name: 'postgres',
  async prepare(mocha) {
    const reason = await postgresUnavailableReason();
    if (reason) {
      // On CI the PostgreSQL suites are mandatory: a missing server is a failure, not a skip.
      if (process.env.CI === 'true') throw new Error(`${reason} (mandatory when CI=true)`);
      console.log(`      skipped: ${reason}`);
      mocha.skip();
    }
    const dataDir = tempDir();
    const database: TestDatabase = await createTestDatabase();
    return {
      dataDir,
      databaseUrl: database.url,
      cleanup: async () => {
        await database.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

export const STORE_TARGETS: readonly StoreTarget[] = [sqlite, postgres];

/** Runs the same suite once per store backend. */
export function describeEachStore(title: string, suite: (target: StoreTarget) => void): void {
  for (const target of STORE_TARGETS) {
    describe(`${title} [${target.name}]`, function () {
      suite(target);
    });
  }
}
