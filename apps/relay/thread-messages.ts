import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../libs/config/config.js';

/** What a thread of the process (a pipeline thread, the search indexer's) starts with. */
export interface ThreadData {
  config: Config;
  /** `pipeline-0`, `search-indexer`: its log lines, metrics and config group say which thread it is. */
  name: string;
  /** The main thread's logger level: lines it would drop are not even posted to it. */
  logLevel: Config['logLevel'];
  /** A pipeline thread on the embedded log: the port the main thread serves its broker on. */
  brokerPort?: MessagePort;
}

/** From the main thread to one of its threads. */
export type ThreadRequest = { type: 'ping'; id: number } | { type: 'metrics'; id: number } | { type: 'stop' };

/** From a thread to the main thread. */
export type ThreadReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'pong'; id: number }
  | { type: 'metrics'; id: number; metrics: unknown }
  /** A line the thread's logger wrote, logged again through the main thread's (thread-log.ts). */
  | { type: 'log'; line: string };

/** The replies that answer a request (by its id). */
export type ThreadAnswer = Extract<ThreadReply, { id: number }>;
