import type { ConfigChange } from '../../libs/pipeline/config-change.js';
import { isDependencyFailure } from '../../libs/pipeline/poison-records.js';
import { backoffDelay, type BackoffOptions } from '../../libs/time/backoff.js';
import { unrefSchedule, type Schedule } from '../../libs/time/schedule.js';

export interface ConfigRefreshesOptions {
  /** Applies one change (`Deliverer.refresh`). */
  apply(change: ConfigChange): Promise<void>;
  logger: { warn(fields: object, message: string): void };
  schedule?: Schedule;
  /**
   * The wait before a change that failed on the store or broker is applied again: 1 s, doubling with each
   * failure of that change up to 30 s, so that a long outage costs a few warnings a minute, not one a second.
   */
  retry?: BackoffOptions;
}

export interface ConfigRefreshes {
  /** Applies the change after every change pushed before it. */
  push(change: ConfigChange): void;
  /** Applies nothing more, and waits for the change being applied. */
  stop(): Promise<void>;
}

/**
 * The deliverer's config changes, applied one at a time: refreshing a Kafka subscription is a rebalance
 * (seconds), so none holds up the API answer or the config consumer. A change whose apply failed on the
 * store or broker (retriable) is applied again later: a deleted destination's jobs waiting in its ordered
 * lines are released only by that change, and would otherwise wait for the next start. Applying a change
 * again is harmless (caches forgotten, lines released, subscription looked at). Other failures are logged.
 */
export function createConfigRefreshes(options: ConfigRefreshesOptions): ConfigRefreshes {
  const { logger } = options;
  const schedule = options.schedule ?? unrefSchedule;
  const retry = options.retry ?? { initialMs: 1000, maxMs: 30_000 };
  const retries = new Set<() => void>();
  let applying = Promise.resolve();
  let stopped = false;

  function retryLater(change: ConfigChange, failures: number, retryMs: number): void {
    const cancel = schedule(() => {
      retries.delete(cancel);
      apply(change, failures);
    }, retryMs);
    retries.add(cancel);
  }

  /** Applies the change after those before it; `failures` is how often it has failed so far. */
  function apply(change: ConfigChange, failures: number): void {
    if (stopped) return;
    applying = applying
      .then(() => options.apply(change))
      .catch((error: unknown) => {
        const again = isDependencyFailure(error) && !stopped;
        const retryMs = backoffDelay(retry, failures + 1);
        logger.warn({ err: error, change, ...(again ? { retryMs } : {}) }, again ? 'deliverer refresh failed; applied again later' : 'deliverer refresh failed');
        if (again) retryLater(change, failures + 1, retryMs);
      });
  }

  return {
    push: (change) => apply(change, 0),
    async stop() {
      stopped = true;
      for (const cancel of retries) cancel();
      retries.clear();
      await applying;
    },
  };
}
