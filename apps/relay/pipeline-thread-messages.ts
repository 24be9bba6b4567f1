import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../libs/config/config.js';

/** What a pipeline thread starts with. */
export interface PipelineThreadData {
  config: Config;
  index: number;
  /** The main thread's logger level: lines it would drop are not even posted to it. */
  logLevel: Config['logLevel'];
  /** On the embedded log: the port the main thread serves its broker on. */
  brokerPort?: MessagePort;
}

/** From the main thread to a pipeline thread. */
export type ThreadRequest = { type: 'ping'; id: number } | { type: 'metrics'; id: number } | { type: 'stop' };

/** From a pipeline thread to the main thread. */
export type ThreadReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'pong'; id: number }
  | { type: 'metrics'; id: number; metrics: unknown }
  /** A line the thread's logger wrote, logged again through the main thread's (thread-log.ts). */
  | { type: 'log'; line: string };

/** The replies that answer a request (by its id). */
export type ThreadAnswer = Extract<ThreadReply, { id: number }>;
