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
export function createMemoryRateWindows(): Pick<RateWindows, 'hit' | 'add'> {
  // A bucket has one window length, so only its current window is ever counted.
  const current = new Map<string, CurrentWindow>();
  const add = async (bucket: string, windowMs: number, nowMs: number, count: number) => {
    const windowStart = nowMs - (nowMs % windowMs);
    const window = current.get(bucket);
    if (window?.windowStart === windowStart) return (window.hits += count);
    current.set(bucket, { windowStart, hits: count });
    return count;
  };
  return { add, hit: (bucket, windowMs, nowMs) => add(bucket, windowMs, nowMs, 1) };
}
