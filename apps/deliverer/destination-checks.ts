import { CIRCUIT_STATES, createCircuitBreakers, type CircuitBreakers, type CircuitBreakersOptions, type CircuitState } from '../../libs/delivery/circuit-breakers.js';
import { createDestinationRateLimiters, createSharedRateLimiters, type DestinationRateLimiters, type SharedWindows } from '../../libs/delivery/token-bucket.js';
import type { RelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { destinationTopic } from '../../libs/pipeline/topology.js';
import type { Schedule } from '../../libs/time/schedule.js';
import { HOLD, type DelivererLogger } from './destination-batch.js';
import type { PauseHolds } from './pause-holds.js';

/** How often the breakers and rate buckets of destinations no longer sent to are dropped. */
export const IDLE_STATE_SWEEP_MS = 60_000;

/** The breaker and rate settings of a deliverer. */
export interface CheckOptions {
  breakerOptions?: Omit<CircuitBreakersOptions, 'onStateChange' | 'schedule' | 'now'>;
  /** Told each change of a destination's breaker; the composition root publishes it on relay.config. */
  onCircuitChange?: (destinationId: string, state: CircuitState) => void;
  /**
   * Where every deliverer's requests to a rate-limited destination are counted (the store's windows),
   * when several may share its partitions; without it the limit is this process's own.
   */
  sharedRateWindows?: SharedWindows;
}

export interface DestinationChecks {
  breakers: CircuitBreakers;
  rateLimiters: DestinationRateLimiters;
  /** The destination topics' holds, once the consumer exists: an open circuit pauses its topic. */
  attach(holds: PauseHolds | null): void;
  /** A changed or deleted destination starts over with a closed circuit and a full rate budget. */
  reset(destinationId: string): void;
  /** Sweeps idle state every `IDLE_STATE_SWEEP_MS` until `shutdown`. */
  startIdleSweep(): void;
  shutdown(): void;
}

/**
 * The second part of the deliverer: what is checked per destination before a job is sent. A circuit
 * breaker (an open circuit pauses the destination's topic until half open) and a rate budget; the
 * third check, a disabled destination, is the lookup's (destination-batch.ts).
 */
export function createDestinationChecks(
  options: CheckOptions,
  { metrics, logger, now, schedule }: { metrics: RelayMetrics; logger: DelivererLogger; now: () => number; schedule: Schedule },
): DestinationChecks {
  let holds: PauseHolds | null = null;
  let cancelIdleSweep: (() => void) | undefined;
  const rateLimiters = options.sharedRateWindows ? createSharedRateLimiters(options.sharedRateWindows) : createDestinationRateLimiters();
  const removeCircuitSeries = (destinationId: string): void => {
    for (const state of CIRCUIT_STATES) metrics.circuitState.remove({ destination: destinationId, state });
  };

  const breakers = createCircuitBreakers({
    ...options.breakerOptions,
    schedule,
    now,
    onStateChange(destinationId, state) {
      if (state === 'open') logger.warn({ destinationId }, 'Circuit opened: deliveries to this destination are paused');
      else logger.info({ destinationId, state }, 'Circuit no longer open: deliveries to this destination resume');
      for (const each of CIRCUIT_STATES) metrics.circuitState.set({ destination: destinationId, state: each }, each === state ? 1 : 0);
      options.onCircuitChange?.(destinationId, state);
      // Paused until half open: the trial attempt then comes from the topic itself.
      if (state === 'open') holds?.hold({ topic: destinationTopic(destinationId) }, HOLD.circuitOpen);
      else holds?.release({ topic: destinationTopic(destinationId) }, HOLD.circuitOpen);
    },
  });

  /**
   * What is per destination in memory lasts only while the destination is sent to: a breaker that counts
   * nothing any more and a bucket refilled to capacity are as new, so they are dropped (and made again by
   * the next job), as is a closed circuit's gauge. Their in-flight places go with their last answer.
   */
  function sweepIdleState(): void {
    for (const destinationId of breakers.evictIdle()) removeCircuitSeries(destinationId);
    rateLimiters.evictIdle(now());
    cancelIdleSweep = schedule(sweepIdleState, IDLE_STATE_SWEEP_MS);
  }

  return {
    breakers,
    rateLimiters,
    attach(current) {
      holds = current;
    },
    // The change (a new URL, credentials, limit) is usually what was meant to fix it, and a deleted one needs neither.
    reset(destinationId) {
      breakers.forget(destinationId);
      rateLimiters.forget(destinationId);
      removeCircuitSeries(destinationId);
      holds?.release({ topic: destinationTopic(destinationId) }, HOLD.circuitOpen);
    },
    startIdleSweep() {
      cancelIdleSweep = schedule(sweepIdleState, IDLE_STATE_SWEEP_MS);
    },
    shutdown() {
      cancelIdleSweep?.();
      breakers.shutdown();
    },
  };
}
