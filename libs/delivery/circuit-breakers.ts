import CircuitBreaker from 'opossum';
import { unrefSchedule, type Schedule } from '../time/schedule.js';
import type { AttemptOutcome } from './attempt-outcome.js';

export const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;
export type CircuitState = (typeof CIRCUIT_STATES)[number];

export interface CircuitBreakersOptions {
  /** Failure percentage in the rolling window that opens a circuit. */
  errorThresholdPercentage?: number;
  /** Attempts in the window before the percentage is judged at all. */
  volumeThreshold?: number;
  /** How long a circuit stays open before one trial attempt is let through (half open). */
  resetTimeoutMs?: number;
  rollingCountTimeoutMs?: number;
  rollingCountBuckets?: number;
  /** Times the reset (open -> half open); unref'd `setTimeout` by default, as opossum's own was. Tests advance their own. */
  schedule?: Schedule;
  /** The clock `evictIdle` measures idleness by (default `Date.now`). */
  now?: () => number;
  /** Called on open, half open and close; the deliverer pauses or resumes the destination's topic. */
  onStateChange?: (destinationId: string, state: CircuitState) => void;
}

/** `circuit_open`: nothing was sent. Backpressure, not a failed attempt: it uses up no retry. */
export type GuardedAttempt = { kind: 'sent'; outcome: AttemptOutcome } | { kind: 'circuit_open' };

export interface CircuitBreakers {
  /** Runs the attempt through the destination's breaker. Rejects only if `attempt` itself throws. */
  run(destinationId: string, attempt: () => Promise<AttemptOutcome>): Promise<GuardedAttempt>;
  circuitState(destinationId: string): CircuitState;
  /**
   * Takes on the state another process's breaker for the destination reached: open (then half open
   * after the reset timeout, as if it had opened here) or closed. A change fires `onStateChange`; the
   * state it already has changes nothing, so processes hearing each other settle.
   */
  adopt(destinationId: string, state: 'open' | 'closed'): void;
  /** Drops the breaker of a deleted destination. */
  forget(destinationId: string): void;
  /**
   * Drops the breakers that count nothing any more: closed, no attempt in flight, and none started or
   * answered for the rolling window and one bucket, so every count has left the window. A new breaker is
   * then the same, and is made on the destination's next attempt. Answers the destinations dropped.
   */
  evictIdle(): string[];
  /** Destinations with a breaker held. */
  readonly size: number;
  shutdown(): void;
}

/**
 * Whether an outcome is evidence that the destination is down or overloaded. Timeouts, network
 * errors, 5xx, 408 and 429 are. A 3xx or another 4xx is not: the destination is up and answering,
 * it dislikes this request or its configuration (bad auth, wrong path, validation), and stopping
 * every delivery to it would not help it recover, only delay events it would accept. Those attempts
 * are still retried by the retry policy. A refused address is our own guard, not the destination.
 */
export function countsAgainstCircuit(outcome: AttemptOutcome): boolean {
  // A queue target's refusal is like a 4xx: the server is up and dislikes this message or its settings.
  if (outcome.ok || outcome.errorKind === 'refused_address' || outcome.errorKind === 'rejected') return false;
  if (outcome.errorKind !== 'http_status' || outcome.statusCode === null) return true;
  return outcome.statusCode >= 500 || outcome.statusCode === 408 || outcome.statusCode === 429;
}

/** Carries a failed outcome through opossum, which only counts rejections as failures. */
class OutcomeCountedAsFailure extends Error {
  constructor(readonly outcome: AttemptOutcome) {
    super(outcome.error ?? 'delivery attempt failed');
  }
}

async function guardedAttempt(attempt: () => Promise<AttemptOutcome>): Promise<AttemptOutcome> {
  const outcome = await attempt();
  if (countsAgainstCircuit(outcome)) throw new OutcomeCountedAsFailure(outcome);
  return outcome;
}

type Breaker = CircuitBreaker<[() => Promise<AttemptOutcome>], AttemptOutcome>;
/** opossum reads `state` ("State Initialization" in its README); @types/opossum does not declare it. */
type BreakerSettings = CircuitBreaker.Options<[() => Promise<AttemptOutcome>]> & { state?: Partial<CircuitBreaker.State> };

/**
 * opossum's own reset timer, set as far off as `setTimeout` goes (Infinity would fire after 1 ms): the
 * reset is timed on the injected schedule instead. opossum unrefs its timer and clears it on close and
 * shutdown.
 */
const INERT_RESET_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * One opossum breaker per destination, created on first use. opossum times the move from open to half
 * open with a `setTimeout` of its own and has no public way to make it; so the reset runs on `schedule`,
 * and the destination's breaker is then replaced by one built half open that counts on in the same
 * rolling window.
 */
export function createCircuitBreakers(options: CircuitBreakersOptions = {}): CircuitBreakers {
  const schedule = options.schedule ?? unrefSchedule;
  const now = options.now ?? Date.now;
  const resetTimeoutMs = options.resetTimeoutMs ?? 30_000;
  const rollingCountTimeoutMs = options.rollingCountTimeoutMs ?? 60_000;
  const rollingCountBuckets = options.rollingCountBuckets ?? 12;
  const idleAfterMs = rollingCountTimeoutMs + rollingCountTimeoutMs / rollingCountBuckets;
  const notify = options.onStateChange;
  /**
   * Per destination with a breaker: the breaker (replaced by a half-open one after each reset), its
   * attempts in flight, when one last started or was answered, and how to cancel its pending reset.
   */
  const entries = new Map<string, { breaker: Breaker; inFlight: number; lastUsedAt: number; cancelReset?: () => void }>();

  function cancelReset(destinationId: string): void {
    const entry = entries.get(destinationId);
    entry?.cancelReset?.();
    if (entry) entry.cancelReset = undefined;
  }

  /**
   * A closed breaker for the destination, or with `opened`, the half-open one that takes over from it in
   * the same entry; answers the destination's entry.
   */
  function build(destinationId: string, opened?: Breaker) {
    const settings: BreakerSettings = {
      // The sender enforces the destination's own timeout; a second clock here would only race it.
      timeout: false,
      errorThresholdPercentage: options.errorThresholdPercentage ?? 50,
      volumeThreshold: options.volumeThreshold ?? 5,
      resetTimeout: INERT_RESET_TIMEOUT_MS,
      rollingCountTimeout: rollingCountTimeoutMs,
      rollingCountBuckets,
      // Nothing listens to opossum's snapshots, and each breaker would emit them on a timer of its own.
      enableSnapshots: false,
      ...(opened && { state: { closed: false, halfOpen: true }, status: opened.status }),
    };
    const breaker: Breaker = new CircuitBreaker(guardedAttempt, settings);
    breaker.on('open', () => {
      entries.get(destinationId)!.cancelReset = schedule(() => halfOpen(destinationId), resetTimeoutMs);
      notify?.(destinationId, 'open');
    });
    breaker.on('close', () => {
      cancelReset(destinationId);
      notify?.(destinationId, 'closed');
    });
    const entry = entries.get(destinationId);
    if (entry) {
      entry.breaker = breaker;
      return entry;
    }
    const created = { breaker, inFlight: 0, lastUsedAt: 0 };
    entries.set(destinationId, created);
    return created;
  }

  function halfOpen(destinationId: string): void {
    const entry = entries.get(destinationId)!;
    entry.cancelReset = undefined;
    const opened = entry.breaker;
    // Retired unheard (a late answer to a request it let through before opening no longer counts), and
    // closed to clear opossum's timer: shutdown() would also stop the rolling window its successor keeps.
    opened.removeAllListeners();
    opened.close();
    build(destinationId, opened);
    notify?.(destinationId, 'half_open');
  }

  const entryFor = (destinationId: string) => entries.get(destinationId) ?? build(destinationId);

  function drop(destinationId: string): void {
    cancelReset(destinationId);
    entries.get(destinationId)?.breaker.shutdown();
    entries.delete(destinationId);
  }

  return {
    async run(destinationId, attempt) {
      const entry = entryFor(destinationId);
      entry.inFlight += 1;
      entry.lastUsedAt = now();
      try {
        return { kind: 'sent', outcome: await entry.breaker.fire(attempt) };
      } catch (error) {
        if (error instanceof OutcomeCountedAsFailure) return { kind: 'sent', outcome: error.outcome };
        // Open, or half open with its single trial already in flight.
        if ((error as { code?: unknown } | null)?.code === 'EOPENBREAKER') return { kind: 'circuit_open' };
        throw error;
      } finally {
        entry.inFlight -= 1;
        entry.lastUsedAt = now();
      }
    },
    circuitState(destinationId) {
      const breaker = entries.get(destinationId)?.breaker;
      if (!breaker) return 'closed';
      if (breaker.halfOpen) return 'half_open';
      return breaker.opened ? 'open' : 'closed';
    },
    adopt(destinationId, state) {
      const { breaker } = entryFor(destinationId);
      if (state === 'open') breaker.open();
      else breaker.close();
    },
    forget: drop,
    evictIdle() {
      const dropped: string[] = [];
      const nowMs = now();
      for (const [destinationId, { breaker, inFlight, lastUsedAt }] of entries) {
        if (!breaker.closed || inFlight > 0 || nowMs - lastUsedAt < idleAfterMs) continue;
        drop(destinationId);
        dropped.push(destinationId);
      }
      return dropped;
    },
    get size() {
      return entries.size;
    },
    shutdown() {
      for (const { breaker, cancelReset: cancel } of entries.values()) {
        cancel?.();
        breaker.shutdown();
      }
      entries.clear();
    },
  };
}
