import { fork } from 'node:child_process';
import path from 'node:path';
import type { TargetReady, TargetReport } from './bench-target.js';

export type TargetKind = 'bare' | 'forward' | 'shell' | 'verify' | 'all' | 'gateway';

export interface RunningTarget {
  ready: TargetReady;
  stop(): Promise<TargetReport>;
}

/** The compiled target: run `npm run build` first, so it holds the sources as they are now. */
const COMPILED_TARGET = path.resolve(import.meta.dirname, '../../dist/bench/ingest/bench-target.js');

/**
 * Forks one bench-target.ts server under plain node (`execArgv` e.g. `--cpu-prof`; `args` after the kind, the
 * sink's URL for `forward`); resolves once it listens.
 */
export function startTarget(kind: TargetKind, execArgv: string[] = [], args: string[] = []): Promise<RunningTarget> {
  // execArgv given, so the target does not inherit this process's `--import tsx`.
  const child = fork(COMPILED_TARGET, [kind, ...args], { execArgv });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${kind} target exited with ${code} before it was ready`)));
    child.once('message', (message: { ready: TargetReady }) => {
      child.removeAllListeners('exit');
      resolve({
        ready: message.ready,
        stop: () =>
          new Promise((done) => {
            child.once('message', (reply: { report: TargetReport }) => done(reply.report));
            child.send({ stop: true });
          }),
      });
    });
  });
}
