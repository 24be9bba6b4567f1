import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** One built file, held in memory with its gzip form (the console is a few files, about 50 KB compressed). */
export interface ConsoleAsset {
  body: Buffer;
  gzip: Buffer;
  contentType: string;
  /** Hashed file names never change content, so browsers may keep them for good. */
  immutable: boolean;
}

/** URL path below /console (`/`, `/assets/index-abc.js`) to its asset. */
export type ConsoleAssets = ReadonlyMap<string, ConsoleAsset>;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

/** The repository root: the nearest folder above this module with a package.json (from apps/ and dist/apps/ alike). */
function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('package.json not found above the console module');
    folder = parent;
  }
  return folder;
}

/** Where `npm run build` (run by `npm ci`) writes the console: apps/console/web/vite.config.ts. */
export const CONSOLE_BUILD_DIR = join(packageRoot(), 'dist', 'console');

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Reads the built console once at start; undefined when it was not built (the route then says so). */
export async function loadConsoleAssets(folder = CONSOLE_BUILD_DIR): Promise<ConsoleAssets | undefined> {
  if (!existsSync(join(folder, 'index.html'))) return undefined;
  const assets = new Map<string, ConsoleAsset>();
  for (const file of await filesUnder(folder)) {
    const body = await readFile(file);
    const path = `/${relative(folder, file).split(sep).join('/')}`;
    const asset = { body, gzip: gzipSync(body), contentType: CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', immutable: path.startsWith('/assets/') };
    assets.set(path === '/index.html' ? '/' : path, asset);
  }
  return assets;
}
