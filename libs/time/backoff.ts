export interface BackoffOptions {
  /** Delay after the first failure. */
  initialMs: number;
  /** The delay doubles per consecutive failure up to this. */
  maxMs: number;
}

export const DEFAULT_ERROR_BACKOFF: BackoffOptions = { initialMs: 100, maxMs: 5_000 };

/** Delay before retrying a batch after `failures` consecutive failures (1-based). */
export function backoffDelay(options: BackoffOptions, failures: number): number {
  return Math.min(options.initialMs * 2 ** Math.max(0, failures - 1), options.maxMs);
}
