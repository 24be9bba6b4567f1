import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../../libs/config/config.js';
import { createLogger, type Logger } from '../../libs/logging/logger.js';
import { postedLines } from '../../libs/logging/thread-log.js';
import { createRelayMetrics, type RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import type { ThreadData, ThreadReply, ThreadRequest } from './thread-messages.js';
import { closerStack, type Closers } from './thread-parts.js';

export interface ThreadParts {
  data: ThreadData;
  config: Config;
  logger: Logger;
  metrics: RelayMetrics;
  closers: Closers;
}

/**
 * What every thread pipeline-threads.ts starts does around its own work (`start`, which opens what the
 * thread runs and pushes its closers): a logger whose lines the main thread writes, metrics it sums into
 * its `/metrics` (the process-wide ones, CPU and memory, are the main thread's alone), `ready` or `failed`
 * once started, and answers to ping, metrics and stop (the closers run last first, then the thread ends).
 */
export async function runThread(start: (parts: ThreadParts) => Promise<void>): Promise<void> {
  const data = workerData as ThreadData;
  const port = parentPort!;
  const reply = (message: ThreadReply) => port.postMessage(message);
  // Structured cloning turns a Buffer into a Uint8Array.
  const config = { ...data.config, encryptionKey: data.config.encryptionKey && Buffer.from(data.config.encryptionKey) };
  // The main thread names this thread in each line and writes it where its own lines go.
  const logger = createLogger({ level: data.logLevel, destination: postedLines((line) => reply({ type: 'log', line })) });
  const metrics = createRelayMetrics({ defaultMetrics: false, thread: data.name });
  const closers = closerStack(logger);

  async function stop(): Promise<void> {
    await closers.closeAll();
    // Ends this thread only, whatever timers or handles a library left referenced.
    process.exit(0);
  }

  try {
    await start({ data, config, logger, metrics, closers });
    port.on('message', (request: ThreadRequest) => {
      if (request.type === 'ping') reply({ type: 'pong', id: request.id });
      else if (request.type === 'metrics') void metrics.registry.getMetricsAsJSON().then((json) => reply({ type: 'metrics', id: request.id, metrics: json }));
      else void stop();
    });
    reply({ type: 'ready' });
  } catch (error) {
    await closers.closeAll();
    reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
}
