/** The most of `times` (ms, any order) that fall within any span of `spanMs`: a sliding window's peak count. */
export function busiestSpan(times: readonly number[], spanMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last += 1) {
    while (sorted[last]! - sorted[first]! >= spanMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
