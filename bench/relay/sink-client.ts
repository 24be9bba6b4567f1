import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { QueueReader, QueueReaderSpec } from './queue-reader.js';

/** Commands to sink-process.ts and its replies, matched by `id`. */
export type SinkCommand = { id: number } & ({ op: 'counts' } | { op: 'arrivals'; eventIds: string[] } | { op: 'reset' });

export interface SinkCounts {
  total: number;
  /** Deliveries per request path (one path per destination). */
  perPath: Record<string, number>;
}

export interface SinkReply {
  id: number;
  result: SinkCounts | { arrivals: (number | null)[] } | Record<string, never>;
}

export interface BenchSink {
  url: string;
  /** The queue destination the sink reads too, when started with a queue spec. */
  queue?: QueueReader['destination'];
  pid: number;
  counts(): Promise<SinkCounts>;
  /** When each event first arrived (ms since the epoch, sub-ms resolution), null if it has not. */
  arrivals(eventIds: string[]): Promise<(number | null)[]>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts sink-process.ts in a child process (reading the queue of `queue` too) and returns its client. */
export async function startBenchSink(queue?: QueueReaderSpec): Promise<BenchSink> {
  const child: ChildProcess = fork(path.join(import.meta.dirname, 'sink-process.ts'), queue ? [JSON.stringify(queue)] : [], { execArgv: ['--import', 'tsx'] });
  const ready = await new Promise<{ url: string; queue?: QueueReader['destination'] }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the sink exited with ${code} before it was ready`)));
    child.once('message', (message: { ready: { url: string; queue?: QueueReader['destination'] } }) => {
      child.removeAllListeners('exit');
      resolve(message.ready);
    });
  });
  const { url } = ready;
  let nextId = 0;
  const waiting = new Map<number, (result: SinkReply['result']) => void>();
  child.on('message', (reply: SinkReply) => {
    waiting.get(reply.id)?.(reply.result);
    waiting.delete(reply.id);
  });
  const call = <T extends SinkReply['result']>(command: SinkCommand) =>
    new Promise<T>((resolve) => {
      waiting.set(command.id, resolve as (result: SinkReply['result']) => void);
      child.send(command);
    });
  return {
    url,
    queue: ready.queue,
    pid: child.pid!,
    counts: () => call<SinkCounts>({ id: nextId++, op: 'counts' }),
    arrivals: async (eventIds) => (await call<{ arrivals: (number | null)[] }>({ id: nextId++, op: 'arrivals', eventIds })).arrivals,
    reset: async () => {
      await call({ id: nextId++, op: 'reset' });
    },
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ stop: true });
      }),
  };
}
