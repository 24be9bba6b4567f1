import { openStore } from '../store/store.js';
import { createTestDatabase, postgresUnavailableReason, TEMPLATE_VARIABLE, type TestDatabase } from './postgres.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Mocha's global fixtures run once per run, before its workers start (which inherit the variable).
let template: TestDatabase | undefined;

/** Migrates one database for the run's PostgreSQL suites to copy, when PostgreSQL is there. */
export async function mochaGlobalSetup(): Promise<void> {
  if ((await postgresUnavailableReason()) !== null) return;
  template = await createTestDatabase({ template: 'template1' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-template-'));
  try {
    await (await openStore({ databaseUrl: template.url, dataDir })).close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.env[TEMPLATE_VARIABLE] = new URL(template.url).pathname.slice(1);
}

export async function mochaGlobalTeardown(): Promise<void> {
  delete process.env[TEMPLATE_VARIABLE];
  await template?.drop();
}
