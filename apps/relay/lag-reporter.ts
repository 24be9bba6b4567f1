import type { Admin } from '../../libs/broker/broker.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';

export interface LagReporterOptions {
  admin: Pick<Admin, 'lag'>;
  groups: string[];
  gauge: RelayMetrics['consumerLag'];
  logger: { warn(context: Record<string, unknown>, message: string): void };
  intervalMs?: number;
}

/** Publishes each group's lag per topic (summed over partitions) as `relay_consumer_lag`, periodically. */
export function startLagReporter(options: LagReporterOptions) {
  const report = async () => {
    for (const group of options.groups) {
      try {
        const perTopic = new Map<string, number>();
        for (const entry of await options.admin.lag(group)) perTopic.set(entry.topic, (perTopic.get(entry.topic) ?? 0) + Math.max(0, entry.lag));
        for (const [topic, lag] of perTopic) options.gauge.set({ group, topic }, lag);
      } catch (error) {
        options.logger.warn({ err: error, group }, 'could not read consumer lag');
      }
    }
  };
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(report);
  }, options.intervalMs ?? 15_000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
