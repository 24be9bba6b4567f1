import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { ConcurrencyLimit, KeyedConcurrencyLimits } from '../../libs/concurrency/concurrency-limit.js';

export interface InFlightLimitsOptions {
  /** Delivery requests in flight in the process. */
  maxInFlight: number;
  /**
   * Requests in flight to one destination. Keeps a slow destination with a deep backlog from taking
   * every process-wide place; keep it at or below the sender's connections per origin, or requests
   * would queue inside the HTTP client with their timeout already running.
   */
  maxInFlightPerDestination: number;
  metrics: Pick<RelayMetrics, 'deliveriesInFlight'>;
}

/** The places a delivery request needs: one of its destination's, then one of the process's. */
export function createInFlightLimits(options: InFlightLimitsOptions) {
  const global = new ConcurrencyLimit(options.maxInFlight);
  const perDestination = new KeyedConcurrencyLimits<string>(options.maxInFlightPerDestination);

  return {
    /** Resolves with the function that gives both places back. */
    async acquire(destinationId: string): Promise<() => void> {
      // The destination's place first: a destination at its own limit does not sit on a shared place.
      const releaseOwn = await perDestination.acquire(destinationId);
      const releaseGlobal = await global.acquire();
      options.metrics.deliveriesInFlight.inc();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        options.metrics.deliveriesInFlight.dec();
        releaseGlobal();
        releaseOwn();
      };
    },
  };
}

export type InFlightLimits = ReturnType<typeof createInFlightLimits>;
