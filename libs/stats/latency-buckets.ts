/**
 * Attempt latencies are counted in fixed buckets, so statistics over any window are sums of small rows
 * and percentiles are estimated within one bucket. Upper bounds in ms (inclusive); one more bucket
 * takes everything above the last bound.
 */
export const LATENCY_BOUNDS_MS = [10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 60000] as const;

export const LATENCY_BUCKET_COUNT = LATENCY_BOUNDS_MS.length + 1;

/** Column names of the buckets in the statistics table: `lat_b0` ... */
export const LATENCY_BUCKET_COLUMNS = Array.from({ length: LATENCY_BUCKET_COUNT }, (_, i) => `lat_b${i}`);

export function latencyBucket(latencyMs: number): number {
  const index = LATENCY_BOUNDS_MS.findIndex((bound) => latencyMs <= bound);
  return index === -1 ? LATENCY_BOUNDS_MS.length : index;
}

/**
 * The p-th percentile (nearest rank) of the counted latencies, interpolated inside its bucket; the top
 * bucket ends at the largest latency seen. Null when nothing was counted.
 */
export function latencyPercentile(counts: readonly number[], p: number, maxLatencyMs: number): number | null {
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let before = 0;
  for (const [index, count] of counts.entries()) {
    if (before + count >= rank) {
      const lower = index === 0 ? 0 : LATENCY_BOUNDS_MS[index - 1]!;
      const upper = Math.min(LATENCY_BOUNDS_MS[index] ?? maxLatencyMs, maxLatencyMs);
      return Math.round(lower + (Math.max(upper, lower) - lower) * ((rank - before) / count));
    }
    before += count;
  }
  return maxLatencyMs;
}
