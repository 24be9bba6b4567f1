import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { untilStopped } from './stopped-process.js';

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
        await untilStopped(child.pid!);
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

