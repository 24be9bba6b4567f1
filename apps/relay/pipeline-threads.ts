import { MessageChannel, Worker } from 'node:worker_threads';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import type { Broker } from '../../libs/broker/broker.js';
import { serveBroker, type ServedBroker } from '../../libs/broker/thread/serve-broker.js';
import type { Config } from '../../libs/config/config.js';
import { UnavailableError } from '../../libs/errors/errors.js';
import type { Logger } from '../../libs/logging/logger.js';
import { lineForwarder } from '../../libs/logging/thread-log.js';
import { pipelineDealRank } from '../../libs/pipeline/topology.js';
import type { Role } from '../../libs/roles/role.js';
import { portRequests, type PortRequests } from '../../libs/thread/port-requests.js';
import { threadEntry } from '../../libs/thread/thread-entry.js';
import { systemSchedule, type Schedule } from '../../libs/time/schedule.js';
import { within } from '../../libs/time/within.js';
import type { ThreadAnswer, ThreadData, ThreadReply, ThreadRequest } from './thread-messages.js';

export interface PipelineThreadsOptions {
  config: Config;
  /** This process's broker; on the embedded log the threads reach it through ports served here. */
  broker: Broker;
  logger: Logger;
  count: number;
  /** Times the restart of a thread that ended on its own, 1 s after; tests pass one they advance. */
  schedule?: Schedule;
  /** Told of each thread once it has started, again after each restart; tests end one through its worker. */
  onThreadStart?: (thread: { name: string; worker: Worker }) => void;
}

type ThreadMetrics = MetricObjectWithValues<MetricValue<string>>[];

const entry = (file: string) => threadEntry(import.meta.url, file);

const ANSWER_TIMEOUT_MS = 2_000;
const RESTART_DELAY_MS = 1_000;

/** A thread the process runs beside its main one: its name, its entry file and how it reaches the broker. */
interface ThreadSpec {
  name: string;
  entry: URL;
  /** It reaches the broker; on the embedded log its consumers stand in each group's deal as this ranks them. */
  broker?: { ranks(groupId: string): number };
}

/** `count` pipeline threads, then the search indexer's. */
const threadSpecs = (count: number): ThreadSpec[] => [
  ...Array.from({ length: count }, (_, index) => ({
    name: `pipeline-${index}`,
    entry: entry('pipeline-thread'),
    broker: { ranks: (groupId: string) => pipelineDealRank(groupId, index, count) },
  })),
  { name: 'search-indexer', entry: entry('search-indexer-thread') },
];

type StartOutcome = Extract<ThreadReply, { type: 'ready' | 'failed' }> | { type: 'exit'; code: number };

/** One thread of the process: its worker, the port its broker is served on (a pipeline thread's, on the embedded log), and the questions asked of it. */
class RelayThread {
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

  static async start(options: PipelineThreadsOptions, spec: ThreadSpec): Promise<RelayThread> {
    const { config, broker } = options;
    const { name } = spec;
    const channel = spec.broker && !config.kafkaBrokers ? new MessageChannel() : undefined;
    const served = channel ? serveBroker(broker, channel.port1, spec.broker?.ranks) : undefined;
    const workerData: ThreadData = { config, name, logLevel: options.logger.level as Config['logLevel'], brokerPort: channel?.port2 };
    const worker = new Worker(spec.entry, { workerData, transferList: channel ? [channel.port2] : [] });
    const thread = new RelayThread(name, worker, served, options.logger.child({ thread: name }));
    const started = await thread.started;
    if (started.type !== 'ready') {
      await worker.terminate();
      await thread.release();
      const reason = started.type === 'failed' ? started.message : `it exited with code ${started.code}`;
      throw new Error(`Thread ${name} did not start: ${reason}`);
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
 * other cores carry the pipeline while the main thread takes webhooks and API calls, and the search indexer
 * on one more, so that indexing takes no turns of the threads that route and deliver. On the embedded log
 * (one owner: this thread) each pipeline thread's broker is a port served here; on Kafka each connects its
 * own; the indexer needs none. Each thread opens its own store connection. A thread that ends on its own is logged and started
 * again: what it had not committed is in the log and is read again (at least once).
 */
export function pipelineThreads(options: PipelineThreadsOptions) {
  const specs = threadSpecs(options.count);
  const threads: (RelayThread | undefined)[] = [];
  const schedule = options.schedule ?? systemSchedule;
  const restarts = new Set<() => void>();
  let stopping = false;

  async function launch(index: number): Promise<void> {
    const thread = await RelayThread.start(options, specs[index]!);
    // Stopped while this one started again: it stops at once.
    if (stopping) return thread.stop();
    threads[index] = thread;
    options.onThreadStart?.({ name: thread.name, worker: thread.worker });
    void thread.exited.then(async (code) => {
      if (stopping) return;
      threads[index] = undefined;
      await thread.release();
      thread.logger.error({ code }, 'A thread ended on its own; starting it again');
      relaunchLater(index);
    });
  }

  function relaunchLater(index: number): void {
    const cancel = schedule(() => {
      restarts.delete(cancel);
      if (stopping) return;
      launch(index).catch((error: unknown) => {
        options.logger.error({ err: error, thread: specs[index]!.name }, 'A thread could not be started again; trying again');
        relaunchLater(index);
      });
    }, RESTART_DELAY_MS);
    restarts.add(cancel);
  }

  const role: Role = {
    name: 'pipeline threads',
    async start() {
      for (let index = 0; index < specs.length; index += 1) await launch(index);
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
      for (const [index, spec] of specs.entries()) {
        const thread = threads[index];
        if (!thread) throw new UnavailableError(`thread ${spec.name} is restarting`);
        await thread.ask({ type: 'ping' });
      }
    },
    /** `/metrics` over this thread's registry and every other thread's, summed as one process's. */
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
