import { MessageChannel, Worker } from 'node:worker_threads';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import type { Broker } from '../../libs/broker/broker.js';
import { serveBroker, type ServedBroker } from '../../libs/broker/thread/serve-broker.js';
import type { Config } from '../../libs/config/config.js';
import { UnavailableError } from '../../libs/errors/errors.js';
import type { Logger } from '../../libs/logging/logger.js';
import { lineForwarder } from '../../libs/logging/thread-log.js';
import type { Role } from '../../libs/roles/role.js';
import { portRequests, type PortRequests } from '../../libs/thread/port-requests.js';
import { systemSchedule, type Schedule } from '../../libs/time/schedule.js';
import { within } from '../../libs/time/within.js';
import type { PipelineThreadData, ThreadAnswer, ThreadReply, ThreadRequest } from './pipeline-thread-messages.js';

export interface PipelineThreadsOptions {
  config: Config;
  /** This process's broker; on the embedded log the threads reach it through ports served here. */
  broker: Broker;
  logger: Logger;
  count: number;
  /** Times the restart of a thread that ended on its own, 1 s after; tests pass one they advance. */
  schedule?: Schedule;
  /** Told of each thread once it has started, again after each restart; tests end one through its worker. */
  onThreadStart?: (thread: { index: number; worker: Worker }) => void;
}

type ThreadMetrics = MetricObjectWithValues<MetricValue<string>>[];

// Compiled, the entry is the .js file beside this one. Under tsx (tests, benches) it is the .ts source,
// which a worker loads only once tsx's hooks are registered in that worker, before the import.
const ENTRY = import.meta.url.endsWith('.ts')
  ? new URL(`data:text/javascript,${encodeURIComponent(`const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(new URL('./pipeline-thread.ts', import.meta.url).href)});`)}`)
  : new URL('./pipeline-thread.js', import.meta.url);

const ANSWER_TIMEOUT_MS = 2_000;
const RESTART_DELAY_MS = 1_000;
const threadName = (index: number) => `pipeline-${index}`;

type StartOutcome = Extract<ThreadReply, { type: 'ready' | 'failed' }> | { type: 'exit'; code: number };

/** One pipeline thread: its worker, the port its broker is served on, and the questions asked of it. */
class PipelineThread {
  readonly exited: Promise<number>;
  private readonly started: Promise<StartOutcome>;
  private readonly requests: PortRequests<ThreadAnswer>;

  private constructor(
    readonly name: string,
    readonly worker: Worker,
    private readonly served: ServedBroker | undefined,
    readonly logger: Logger,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', resolve));
    this.requests = portRequests(worker, {
      isAnswer: (message): message is ThreadAnswer => 'id' in (message as ThreadReply),
      closedError: () => new UnavailableError(`${name} has ended`),
    });
    const forward = lineForwarder(logger);
    this.started = new Promise((resolve) => {
      worker.on('message', (reply: ThreadReply) => {
        if (reply.type === 'log') forward(reply.line);
        else if (reply.type === 'ready' || reply.type === 'failed') resolve(reply);
      });
      worker.once('error', (error) => resolve({ type: 'failed', message: error.message }));
      void this.exited.then((code) => resolve({ type: 'exit', code }));
    });
  }

  static async start(options: PipelineThreadsOptions, index: number): Promise<PipelineThread> {
    const { config, broker } = options;
    const name = threadName(index);
    const channel = config.kafkaBrokers ? undefined : new MessageChannel();
    const served = channel ? serveBroker(broker, channel.port1) : undefined;
    const workerData: PipelineThreadData = { config, index, logLevel: options.logger.level as Config['logLevel'], brokerPort: channel?.port2 };
    const worker = new Worker(ENTRY, { workerData, transferList: channel ? [channel.port2] : [] });
    const thread = new PipelineThread(name, worker, served, options.logger.child({ thread: name }));
    const started = await thread.started;
    if (started.type !== 'ready') {
      await worker.terminate();
      await thread.release();
      const reason = started.type === 'failed' ? started.message : `it exited with code ${started.code}`;
      throw new Error(`Pipeline thread ${index} did not start: ${reason}`);
    }
    return thread;
  }

  async ask<T extends ThreadAnswer['type']>(request: Omit<Extract<ThreadRequest, { id: number }>, 'id'>): Promise<Extract<ThreadAnswer, { type: T }>> {
    // A late answer settles a request nobody waits for any more; an ended thread's are rejected at once.
    const answer = await within(ANSWER_TIMEOUT_MS, this.requests.request((id) => ({ ...request, id }) as ThreadRequest), this.name);
    return answer as Extract<ThreadAnswer, { type: T }>;
  }

  /** Asks the thread to stop its roles (they drain as a process's do), waits for it to end, then releases it. */
  async stop(): Promise<void> {
    this.worker.postMessage({ type: 'stop' } satisfies ThreadRequest);
    await this.exited;
    await this.release();
  }

  /** Once the thread has ended: stops serving its broker (the log's consumers it held rebalance). */
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
  const schedule = options.schedule ?? systemSchedule;
  const restarts = new Set<() => void>();
  let stopping = false;

  async function launch(index: number): Promise<void> {
    const thread = await PipelineThread.start(options, index);
    // Stopped while this one started again: it stops at once.
    if (stopping) return thread.stop();
    threads[index] = thread;
    options.onThreadStart?.({ index, worker: thread.worker });
    void thread.exited.then(async (code) => {
      if (stopping) return;
      threads[index] = undefined;
      await thread.release();
      thread.logger.error({ code }, 'A pipeline thread ended on its own; starting it again');
      relaunchLater(index);
    });
  }

  function relaunchLater(index: number): void {
    const cancel = schedule(() => {
      restarts.delete(cancel);
      if (stopping) return;
      launch(index).catch((error: unknown) => {
        options.logger.error({ err: error, thread: threadName(index) }, 'A pipeline thread could not be started again; trying again');
        relaunchLater(index);
      });
    }, RESTART_DELAY_MS);
    restarts.add(cancel);
  }

  const role: Role = {
    name: 'pipeline threads',
    async start() {
      for (let index = 0; index < options.count; index += 1) await launch(index);
    },
    async stop() {
      stopping = true;
      for (const cancel of restarts) cancel();
      await Promise.all(threads.map((thread) => thread?.stop()));
    },
  };

  return {
    role,
    /** For `/readyz`: every thread is running and answers. */
    async ping(): Promise<void> {
      for (let index = 0; index < options.count; index += 1) {
        const thread = threads[index];
        if (!thread) throw new UnavailableError(`pipeline thread ${index} is restarting`);
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
