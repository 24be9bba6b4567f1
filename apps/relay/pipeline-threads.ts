import { MessageChannel, Worker } from 'node:worker_threads';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import type { Broker } from '../../libs/broker/broker.js';
import { serveBroker } from '../../libs/broker/thread/serve-broker.js';
import type { Config } from '../../libs/config/config.js';
import type { Logger } from '../../libs/logging/logger.js';
import type { Role } from '../../libs/roles/role.js';
import type { PipelineThreadData, ThreadReply, ThreadRequest } from './pipeline-thread-messages.js';

export interface PipelineThreadsOptions {
  config: Config;
  /** This process's broker; on the embedded log the threads reach it through ports served here. */
  broker: Broker;
  logger: Logger;
  count: number;
  /** Before a thread that ended on its own is started again (default 1 s). */
  restartDelayMs?: number;
}

type ThreadMetrics = MetricObjectWithValues<MetricValue<string>>[];

// Compiled, the entry is the .js file beside this one. Under tsx (tests, benches) it is the .ts source,
// which a worker loads only once tsx's hooks are registered in that worker, before the import.
const ENTRY = import.meta.url.endsWith('.ts')
  ? new URL(`data:text/javascript,${encodeURIComponent(`const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(new URL('./pipeline-thread.ts', import.meta.url).href)});`)}`)
  : new URL('./pipeline-thread.js', import.meta.url);

const ANSWER_TIMEOUT_MS = 2_000;

/** One pipeline thread: its worker, the port its broker is served on, and its pending questions. */
class PipelineThread {
  private readonly pending = new Map<number, (reply: ThreadReply) => void>();
  private nextId = 0;
  readonly exited: Promise<number>;

  private constructor(
    readonly worker: Worker,
    private readonly served: { close(): Promise<void> } | undefined,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.on('message', (reply: ThreadReply) => {
      if ('id' in reply) {
        this.pending.get(reply.id)?.(reply);
        this.pending.delete(reply.id);
      }
    });
  }

  static async start(options: PipelineThreadsOptions, index: number): Promise<PipelineThread> {
    const { config, broker, logger } = options;
    const channel = config.kafkaBrokers ? undefined : new MessageChannel();
    const served = channel ? serveBroker(broker, channel.port1) : undefined;
    const workerData: PipelineThreadData = { config, index, logLevel: logger.level as Config['logLevel'], brokerPort: channel?.port2 };
    const worker = new Worker(ENTRY, { workerData, transferList: channel ? [channel.port2] : [] });
    const thread = new PipelineThread(worker, served);
    const started = await new Promise<ThreadReply | { type: 'exit'; code: number }>((resolve) => {
      worker.once('message', resolve);
      worker.once('error', (error) => resolve({ type: 'failed', message: error.message }));
      void thread.exited.then((code) => resolve({ type: 'exit', code }));
    });
    if (started.type !== 'ready') {
      await worker.terminate();
      await served?.close();
      const reason = started.type === 'failed' ? started.message : `it exited with code ${started.type === 'exit' ? started.code : '?'}`;
      throw new Error(`Pipeline thread ${index} did not start: ${reason}`);
    }
    return thread;
  }

  ask<T extends ThreadReply['type']>(request: Omit<Extract<ThreadRequest, { id: number }>, 'id'>): Promise<Extract<ThreadReply, { type: T }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`pipeline thread gave no answer within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply as Extract<ThreadReply, { type: T }>);
      });
      this.worker.postMessage({ ...request, id } as ThreadRequest);
    });
  }

  /** Asks the thread to stop its roles (they drain as a process's do), waits for it to end, then stops serving its broker. */
  async stop(): Promise<void> {
    this.worker.postMessage({ type: 'stop' } satisfies ThreadRequest);
    await this.exited;
    await this.served?.close();
  }

  /** After the thread ended on its own: stops serving its broker (the log's consumers it held rebalance). */
  async release(): Promise<void> {
    await this.served?.close();
  }
}

/**
 * The router, deliverer and recorder of a process of role `all` on `count` worker threads, so a machine's
 * other cores carry the pipeline while the main thread takes webhooks and API calls. On the embedded log
 * (one owner: this thread) each thread's broker is a port served here; on Kafka each thread connects its
 * own. Each thread opens its own store connection. A thread that ends on its own is logged and started
 * again: what it had not committed is in the log and is read again (at least once).
 */
export function pipelineThreads(options: PipelineThreadsOptions) {
  const threads: (PipelineThread | undefined)[] = [];
  const restarts = new Set<NodeJS.Timeout>();
  let stopping = false;

  async function launch(index: number): Promise<void> {
    const thread = await PipelineThread.start(options, index);
    // Stopped while this one started again: it stops at once.
    if (stopping) return thread.stop();
    threads[index] = thread;
    void thread.exited.then(async (code) => {
      if (stopping) return;
      threads[index] = undefined;
      await thread.release();
      options.logger.error({ thread: index, code }, 'A pipeline thread ended on its own; starting it again');
      relaunchLater(index);
    });
  }

  function relaunchLater(index: number): void {
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (stopping) return;
      launch(index).catch((error: unknown) => {
        options.logger.error({ err: error, thread: index }, 'A pipeline thread could not be started again; trying again');
        relaunchLater(index);
      });
    }, options.restartDelayMs ?? 1_000);
    restarts.add(timer);
  }

  const role: Role = {
    name: 'pipeline threads',
    async start() {
      for (let index = 0; index < options.count; index += 1) await launch(index);
    },
    async stop() {
      stopping = true;
      for (const timer of restarts) clearTimeout(timer);
      await Promise.all(threads.map((thread) => thread?.stop()));
    },
  };

  return {
    role,
    /** For `/readyz`: every thread is running and answers. */
    async ping(): Promise<void> {
      for (let index = 0; index < options.count; index += 1) {
        const thread = threads[index];
        if (!thread) throw new Error(`pipeline thread ${index} is restarting`);
        await thread.ask({ type: 'ping' });
      }
    },
    /** `/metrics` over this thread's registry and every pipeline thread's, summed as one process's. */
    metricsWith(registry: Registry): Pick<Registry, 'contentType' | 'metrics'> {
      return {
        contentType: registry.contentType,
        async metrics() {
          // A thread that does not answer in time (restarting, or stalled) is left out of this scrape, not failed: its counters come back with it.
          const answers = await Promise.all(threads.map((thread) => thread?.ask<'metrics'>({ type: 'metrics' }).catch(() => undefined)));
          const theirs = answers.flatMap((answer) => (answer ? [answer.metrics as ThreadMetrics] : []));
          return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...theirs]).metrics();
        },
      };
    },
  };
}
