import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import type { Context } from 'mocha';

/**
 * librdkafka's in-process mock cluster, hosted by a `kcat` consumer (Debian package `kcat`). It speaks the
 * Kafka protocol on loopback ports; known limits: CreateTopics/DeleteTopics and idempotent producers fail
 * (no controller), topics are auto-created with 4 partitions, and every fetch waits the full maxWaitTimeInMs.
 */
export interface KafkaMockCluster {
  brokers: string[];
  /** The kcat process that hosts the cluster (for its CPU time in benches). */
  pid: number;
  /**
   * Freezes the cluster (SIGSTOP) and resolves once every thread of it has stopped: requests sent after
   * that stay unanswered until `resume`. (A signal takes effect when its target next runs: on a busy
   * machine the cluster answered a request sent just after the signal.)
   */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
}

export interface KafkaMockOptions {
  brokerCount?: number;
  startTimeoutMs?: number;
}

export function kcatAvailable(): boolean {
  return spawnSync('kcat', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** Starts a mock cluster for a suite; skips the suite where kcat is missing, except on CI, where the Kafka suites are mandatory. */
export async function startKafkaMockOrSkip(mocha: Context, options?: KafkaMockOptions): Promise<KafkaMockCluster> {
  if (!kcatAvailable()) {
    if (process.env.CI === 'true') throw new Error('kcat is required when CI=true for the Kafka mock cluster (apt-get install -y kcat)');
    console.log('      skipped: kcat (librdkafka mock cluster) is not installed (apt-get install -y kcat)');
    mocha.skip();
  }
  return startKafkaMock(options);
}

// librdkafka logs e.g. "Mock cluster enabled: ... replaced with 127.0.0.1:1,127.0.0.1:2" (and, with
// `-d mock`, "bootstrap.servers=127.0.0.1:1,...").
const BOOTSTRAP = /(?:bootstrap\.servers=|replaced with )(127\.0\.0\.1:\d+(?:,127\.0\.0\.1:\d+)*)/;

export async function startKafkaMock(options: KafkaMockOptions = {}): Promise<KafkaMockCluster> {
  const child = spawn(
    'kcat',
    ['-b', 'mock:9092', '-C', '-t', '_keepalive', '-X', `test.mock.num.brokers=${options.brokerCount ?? 3}`, '-o', 'end', '-q'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  try {
    const brokers = await bootstrapServers(child, options.startTimeoutMs ?? 10_000);
    return {
      brokers,
      pid: child.pid!,
      pause: async () => {
        child.kill('SIGSTOP');
        await stopped(child.pid!);
      },
      resume: () => void child.kill('SIGCONT'),
      stop: async () => {
        process.off('exit', killOnExit);
        await terminate(child);
      },
    };
  } catch (error) {
    process.off('exit', killOnExit);
    await terminate(child);
    throw error;
  }
}

function bootstrapServers(child: ChildProcess, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(`kcat printed no bootstrap servers within ${timeoutMs} ms`), timeoutMs);
    const fail = (reason: string) => {
      clearTimeout(timer);
      reject(new Error(`Kafka mock cluster did not start: ${reason}\n${output.slice(-2000)}`));
    };
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`kcat exited (${signal ?? code})`));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      output += chunk;
      const match = BOOTSTRAP.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      // Keep draining stderr so kcat never blocks on a full pipe.
      child.stderr!.removeAllListeners('data');
      child.stderr!.resume();
      resolve(match[1]!.split(','));
    });
  });
}

/** Resolves once every thread of process `pid` is in the stopped state (`T` in /proc/<pid>/task/<tid>/stat). */
async function stopped(pid: number): Promise<void> {
  for (;;) {
    // A thread that ended between the listing and its read is simply not counted.
    const threads = await readdir(`/proc/${pid}/task`).catch(() => []);
    const states = await Promise.all(threads.map((tid) => readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').then(statState, () => undefined)));
    const live = states.filter((state) => state !== undefined);
    if (live.length === 0 || live.some((state) => state === 'Z' || state === 'X')) throw new Error(`the mock cluster (pid ${pid}) has exited`);
    if (live.every((state) => state === 'T' || state === 't')) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** The state field of a /proc stat line: the first field after the command name, which is in parentheses and may hold spaces. */
const statState = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 2_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

