import type { RateWindows } from './rate-windows.js';

interface CurrentWindow {
  windowStart: number;
  hits: number;
}

/**
 * Rate windows counted in this process's memory, for a gateway that is the only one: on the embedded
 * log, which one process owns, counts kept here are as exact as the store's and cost no commit per
 * request. A restart starts every window again at zero, so a limit may let up to twice its count
 * through in the window of a restart. Nothing to purge: a bucket's window is replaced by its next one.
 */
export function createMemoryRateWindows(): Pick<RateWindows, 'hit'> {
  // A bucket has one window length, so only its current window is ever counted.
  const current = new Map<string, CurrentWindow>();
  return {
    async hit(bucket, windowMs, nowMs) {
      const windowStart = nowMs - (nowMs % windowMs);
      const window = current.get(bucket);
      if (window?.windowStart === windowStart) return ++window.hits;
      current.set(bucket, { windowStart, hits: 1 });
      return 1;
    },
  };
}
