import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoreLocation } from './store-targets.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A stack frame as Node prints it; no CLI output may ever contain one. */
export const STACK_FRAME = '    at ';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `relay <args>` as a real child process over the given data location (for tests). No
 * RELAY_ENCRYPTION_KEY is passed: the CLI uses the key file in the data directory.
 */
export function runCli(location: StoreLocation, args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, RELAY_DATA_DIR: location.dataDir };
  if (location.databaseUrl) env.DATABASE_URL = location.databaseUrl;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'apps/cli/main.ts', ...args], { cwd: REPO_ROOT, env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}
