import { expect } from 'chai';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKET_COUNT, latencyBucket, latencyPercentile } from './latency-buckets.js';
import { nearestRank } from './nearest-rank.js';

function countsOf(latencies: number[]): number[] {
  const counts = new Array<number>(LATENCY_BUCKET_COUNT).fill(0);
  for (const latency of latencies) counts[latencyBucket(latency)]! += 1;
  return counts;
}

/** Nearest-rank percentile of the exact values. */
function truePercentile(latencies: number[], p: number): number {
  return nearestRank([...latencies].sort((a, b) => a - b), p);
}

describe('latency buckets', () => {
  it('are as many as the columns migration 0005 created (a change of buckets needs a migration)', () => {
    expect(LATENCY_BUCKET_COUNT).to.equal(23);
  });

  it('puts a latency in the first bucket whose upper bound holds it, and above the last bound in the top bucket', () => {
    expect(latencyBucket(0)).to.equal(0);
    expect(latencyBucket(10)).to.equal(0);
    expect(latencyBucket(11)).to.equal(1);
    expect(latencyBucket(500)).to.equal(LATENCY_BOUNDS_MS.indexOf(500));
    expect(latencyBucket(501)).to.equal(LATENCY_BOUNDS_MS.indexOf(500) + 1);
    expect(latencyBucket(60_000)).to.equal(LATENCY_BOUNDS_MS.length - 1);
    expect(latencyBucket(60_001)).to.equal(LATENCY_BOUNDS_MS.length);
  });

  it('has no percentile without counts', () => {
    expect(latencyPercentile(countsOf([]), 50, 0)).to.equal(null);
  });

  it('estimates p50, p95 and p99 in the bucket of the true value, for spread and for skewed latencies', () => {
    const spread = Array.from({ length: 1000 }, (_, i) => 5 + ((i * 7919) % 2500));
    const skewed = [...Array.from({ length: 900 }, (_, i) => 20 + (i % 40)), ...Array.from({ length: 100 }, (_, i) => 800 + i * 90)];
    for (const latencies of [spread, skewed]) {
      const max = Math.max(...latencies);
      for (const p of [50, 95, 99]) {
        const estimate = latencyPercentile(countsOf(latencies), p, max)!;
        expect(latencyBucket(estimate), `p${p}: ${estimate} vs ${truePercentile(latencies, p)}`).to.equal(latencyBucket(truePercentile(latencies, p)));
      }
    }
  });

  it('ends the top bucket at the largest latency seen, and never estimates above it', () => {
    const latencies = [70_000, 80_000, 90_000];
    expect(latencyPercentile(countsOf(latencies), 99, 90_000)).to.equal(90_000);
    expect(latencyPercentile(countsOf([12, 13]), 99, 13)).to.be.at.most(13);
  });
});
