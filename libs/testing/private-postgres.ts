import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unusedLoopbackPort } from './free-port.js';

/**
 * A PostgreSQL server of the test's own, to stop and start: initdb into a temp directory and pg_ctl on a
 * free loopback port, run as the `postgres` user (the server refuses to run as root). The machine's
 * shared server is never touched.
 */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** Shuts the server down (`pg_ctl stop -m fast`: open connections are ended, as in a restart). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it if running and removes its directory. */
  destroy(): Promise<void>;
}

const OS_USER = 'postgres';
const run = promisify(execFile);

/** The newest installed server's bin directory, or undefined. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((name) => fs.existsSync(path.join(root, name, 'bin', 'pg_ctl')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

function userExists(): boolean {
  try {
    execFileSync('id', ['-u', OS_USER], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

/** Null when a private server can be started here; otherwise why not. */
export function privatePostgresUnavailableReason(): string | null {
  if (!binDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  if (process.getuid?.() !== 0) return 'starting a private PostgreSQL as the postgres user needs root';
  if (!userExists()) return `no "${OS_USER}" user to run a private PostgreSQL as`;
  return null;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir()!;
  const port = await unusedLoopbackPort();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'private-pg-'));
  execFileSync('chown', [OS_USER, root]);
  const dataDir = path.join(root, 'data');
  // Asynchronous, so that a test's load keeps running while the server stops and starts.
  const asPostgres = async (program: string, args: string[]) => void (await run('runuser', ['-u', OS_USER, '--', path.join(bin, program), ...args]));
  await asPostgres('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=100`;
  let running = false;
  const server: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres('pg_ctl', ['-D', dataDir, '-l', path.join(root, 'server.log'), '-o', options, '-w', 'start']);
      running = true;
    },
    async stop() {
      await asPostgres('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await server.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
