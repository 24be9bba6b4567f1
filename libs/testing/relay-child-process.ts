import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Role } from '../config/config.js';
import { TEST_RELAY_ENV } from './test-relay-env.js';

/**
 * The relay as an operator runs it: `node apps/relay/main.ts --role <role>` in a process of its own
 * (through tsx, so no build is needed; benches run the compiled `dist/` that `npm start` runs),
 * configured by its environment only.
 */
export interface RelayProcess {
  role: Role;
  url: string;
  /** Where it serves `/metrics` (METRICS_PORT; a free port unless the test sets one); undefined when `off`. */
  metricsUrl?: string;
  pid: number;
  /** Resolves when the process ends, however it ends. */
  exited: Promise<ProcessExit>;
  /** What the process wrote so far, stdout and stderr, for failure messages. */
  output(): string;
  /** `GET /metrics` on its metrics port, as text. */
  metrics(): Promise<string>;
  /** Sends SIGTERM and waits for the exit. */
  terminate(): Promise<ProcessExit>;
  /** SIGKILL when still running; for cleanup after a failed test. */
  kill(): Promise<void>;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(ROOT, 'apps/relay/main.ts');
const COMPILED_MAIN = path.join(ROOT, 'dist/apps/relay/main.js');
const START_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL = 20_000;

/** Variables of the test runner that must not leak into a relay under test (it reads only what the test gives). */
const isRelaySetting = (name: string) => /^(RELAY_|KAFKA_|DATABASE_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(name);

/** A fresh data directory for one process; the caller removes it. */
export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'relay-process-'));
}

export interface RelayProcessOptions {
  /** Run `dist/` (built beforehand) under plain node, as `npm start` does, instead of the sources through tsx. */
  compiled?: boolean;
  /** Node options of the relay process, e.g. `--cpu-prof`. */
  execArgv?: string[];
  /** How long it may take to listen (default 60 s; a Kafka relay with many destinations joins groups for longer). */
  startTimeoutMs?: number;
}

export async function startRelayProcess(role: Role, env: Record<string, string>, options: RelayProcessOptions = {}): Promise<RelayProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !isRelaySetting(name)));
  const entry = options.compiled ? [COMPILED_MAIN] : ['--import', 'tsx', MAIN];
  const child = spawn(process.execPath, [...(options.execArgv ?? []), ...entry, '--role', role], {
    cwd: ROOT,
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...TEST_RELAY_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let output = '';
  const record = (chunk: string) => {
    output = (output + chunk).slice(-OUTPUT_TAIL);
  };
  child.stdout!.setEncoding('utf8').on('data', record);
  child.stderr!.setEncoding('utf8').on('data', record);
  // 'close', not 'exit': by then stdout and stderr are read to the end, so output() holds the last lines.
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('close', (code, signal) => {
      process.off('exit', killOnExit);
      resolve({ code, signal });
    });
  });

  let listening: Listening;
  try {
    listening = await listeningLine(child, exited, () => output, options.startTimeoutMs ?? START_TIMEOUT_MS);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  const { url, metricsUrl } = listening;
  return {
    role,
    url,
    metricsUrl,
    pid: child.pid!,
    exited,
    output: () => output,
    async metrics() {
      if (!metricsUrl) throw new Error(`${role} serves no /metrics (METRICS_PORT=off)`);
      const response = await fetch(`${metricsUrl}/metrics`);
      if (response.status !== 200) throw new Error(`${role} /metrics answered ${response.status}`);
      return response.text();
    },
    async terminate() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

interface Listening {
  url: string;
  metricsUrl?: string;
}

/** The URLs from main.ts's "relay listening" log line (PORT and METRICS_PORT 0 pick free ports). */
function listeningLine(child: ChildProcess, exited: Promise<ProcessExit>, output: () => string, timeoutMs: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => fail(`no "relay listening" line within ${timeoutMs} ms`), timeoutMs);
    const fail = (reason: string) => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      reject(new Error(`relay process did not start: ${reason}\n${output()}`));
    };
    const onData = (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const listening = parseListening(line);
        if (!listening) continue;
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(listening);
        return;
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => fail(`exited (${signal ?? code})`));
  });
}

function parseListening(line: string): Listening | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: string; url?: string; metricsUrl?: string };
    return entry.msg?.startsWith('relay listening') && entry.url ? { url: entry.url, metricsUrl: entry.metricsUrl } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * For a suite running relay processes: when one of its tests failed, prints the tail of each process's
 * output once the suite is over, before the hooks registered after this one stop the processes.
 */
export function printOutputOnFailure(members: () => ReadonlyArray<RelayProcess | undefined>, tailChars = 4000): void {
  let failed = false;
  afterEach(function () {
    failed ||= this.currentTest?.state === 'failed';
  });
  after(() => {
    if (!failed) return;
    for (const member of members()) if (member) console.log(`\n--- ${member.role} output (tail) ---\n${member.output().slice(-tailChars)}`);
  });
}
