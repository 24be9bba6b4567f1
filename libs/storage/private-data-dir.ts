import fs from 'node:fs';
import path from 'node:path';

const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;
/** Permission bits for the group and others: none may be set on the data directory or its files. */
const SHARED_BITS = 0o077;

export interface PrivateDataDirResult {
  /** Paths whose modes were tightened because they were readable or writable by others. */
  fixed: string[];
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

/**
 * Makes the data directory private: the directory 0700 and every file in it 0600 (the store, the log,
 * their WAL files, the key file hold payloads and secrets). Creates the directory when it is missing;
 * tightens whatever is looser and says what it changed, so the caller can warn. SQLite gives the WAL and
 * shared-memory files it creates later the mode of their database file.
 */
export function makeDataDirPrivate(dataDir: string): PrivateDataDirResult {
  const fixed: string[] = [];
  if (!fs.existsSync(dataDir)) fs.mkdirSync(dataDir, { recursive: true, mode: DIRECTORY_MODE });
  if (modeOf(dataDir) & SHARED_BITS) {
    fs.chmodSync(dataDir, DIRECTORY_MODE);
    fixed.push(dataDir);
  }
  for (const entry of fs.readdirSync(dataDir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(dataDir, entry.name);
    if (modeOf(file) & SHARED_BITS) {
      fs.chmodSync(file, FILE_MODE);
      fixed.push(file);
    }
  }
  return { fixed };
}
