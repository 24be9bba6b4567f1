/**
 * Where ingest-to-delivery latency goes, hop by hop: each consumer group's `relay_consumer_record_wait_seconds`
 * (how long a batch's oldest record was in the log before the group's handler got it) and
 * `relay_consumer_batch_duration_seconds` (how long the handler took), and `relay_delivery_attempt_duration_seconds`
 * (how long the destination took to answer: with a fixed number of requests in flight to it, what bounds a
 * destination's deliveries a second), summed over the relay's processes
 * and taken between two scrapes, so a rate's figures cover that rate alone.
 */
import { samplesInExposition } from '../../libs/testing/metric-samples.js';

/** Cumulative bucket counts by group, then by upper bound (`le`). */
type Buckets = Map<string, Map<number, number>>;

export interface HopHistograms {
  wait: Buckets;
  handling: Buckets;
  /** `relay_delivery_attempt_duration_seconds` of every destination, under one key. */
  attempts: Buckets;
}

const byGroupLabel = (labels: Record<string, string>) => labels.group!;
const ATTEMPTS = 'all';

function bucketsOf(expositions: string[], name: string, groupOf: (labels: Record<string, string>) => string): Buckets {
  const byGroup: Buckets = new Map();
  for (const text of expositions) {
    for (const sample of samplesInExposition(text)) {
      if (sample.name !== `${name}_bucket`) continue;
      const group = groupOf(sample.labels);
      const bounds = byGroup.get(group) ?? new Map<number, number>();
      const le = sample.labels.le === '+Inf' ? Infinity : Number(sample.labels.le);
      bounds.set(le, (bounds.get(le) ?? 0) + sample.value);
      byGroup.set(group, bounds);
    }
  }
  return byGroup;
}

/** One scrape of every process's `/metrics`. */
export function hopHistograms(expositions: string[]): HopHistograms {
  return {
    wait: bucketsOf(expositions, 'relay_consumer_record_wait_seconds', byGroupLabel),
    handling: bucketsOf(expositions, 'relay_consumer_batch_duration_seconds', byGroupLabel),
    attempts: bucketsOf(expositions, 'relay_delivery_attempt_duration_seconds', () => ATTEMPTS),
  };
}

/**
 * The `q` quantile of the observations between two scrapes, in ms, interpolated within its bucket as
 * Prometheus' `histogram_quantile` does; the largest finite bound when it falls in `+Inf`.
 */
export function quantileMs(before: Map<number, number> | undefined, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((le) => after.get(le)! - (before?.get(le) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  const index = counts.findIndex((count) => count >= rank);
  const upper = bounds[index]!;
  const lower = index === 0 ? 0 : bounds[index - 1]!;
  if (upper === Infinity) return lower * 1000;
  const below = index === 0 ? 0 : counts[index - 1]!;
  return (lower + ((upper - lower) * (rank - below)) / Math.max(1, counts[index]! - below)) * 1000;
}

/** "group: wait p50/p99, handling p99" for each group that handled a batch between the two scrapes. */
export function hopWaitsLine(before: HopHistograms, after: HopHistograms): string {
  const parts: string[] = [];
  for (const [group, bounds] of [...after.wait].sort(([a], [b]) => a.localeCompare(b))) {
    const batches = (bounds.get(Infinity) ?? 0) - (before.wait.get(group)?.get(Infinity) ?? 0);
    if (batches === 0) continue;
    const handling = after.handling.get(group);
    const handlingP99 = handling ? quantileMs(before.handling.get(group), handling, 0.99) : NaN;
    parts.push(
      `${group} ${quantileMs(before.wait.get(group), bounds, 0.5).toFixed(0)}/${quantileMs(before.wait.get(group), bounds, 0.99).toFixed(0)} ms (handling p99 ${handlingP99.toFixed(0)} ms, ${batches} batches)`,
    );
  }
  const attempts = after.attempts.get(ATTEMPTS);
  const attemptsPart = attempts
    ? `; delivery attempts p50/p99 ${quantileMs(before.attempts.get(ATTEMPTS), attempts, 0.5).toFixed(1)}/${quantileMs(before.attempts.get(ATTEMPTS), attempts, 0.99).toFixed(1)} ms`
    : '';
  return `record wait before each hop, p50/p99 from /metrics: ${parts.length > 0 ? parts.join('; ') : 'no batches'}${attemptsPart}`;
}
