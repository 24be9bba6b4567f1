/** The p-th percentile (0 < p <= 100) of values sorted ascending, by nearest rank; NaN when there are none. */
export function nearestRank(sorted: readonly number[], p: number): number {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] ?? NaN;
}
