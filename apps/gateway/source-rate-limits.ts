import type { RateWindows } from '../../libs/store/rate-windows.js';

/** The gateway's port for a source's limits: whether one more request fits the window containing `nowMs`. */
export interface SourceRateLimits {
  take(bucket: string, windowMs: number, limit: number, nowMs: number): Promise<boolean>;
}

/** The hits a gateway takes from its windows at a time, for a window that admits `limit`. */
export type LeaseSize = (limit: number) => number;

/**
 * One hit at a time: exact, for windows that cost nothing to count (the embedded log's one gateway, in memory).
 */
export const oneHitLeases: LeaseSize = () => 1;

/**
 * A hundredth of the limit at a time (at least 1), for windows in the store shared by every gateway: each
 * count there is a statement and a commit, which was one every four or five webhooks at 400/s on Kafka, the
 * store's most frequent statement. A gateway spends its lease before it takes another, so one gateway is
 * exact; with several, the hits leased but not spent when a window fills (at most one lease less one per
 * other gateway) are refused early. No window ever admits more than its limit.
 */
export const hundredthLeases: LeaseSize = (limit) => Math.max(1, Math.floor(limit / 100));

interface Lease {
  windowStart: number;
  /** Hits leased in this window and not spent yet. */
  left: number;
  /** The window reached its limit: nothing more is leased in it. */
  full: boolean;
  /** The lease being taken; takes made meanwhile wait for it instead of taking their own. */
  taking?: Promise<void>;
}

/**
 * Source limits over fixed windows: each request spends a hit of this process's lease on its window, and
 * only a spent lease asks the windows for another. A full window refuses the rest of its requests without
 * counting them anywhere.
 */
export function leasedRateLimits(windows: Pick<RateWindows, 'add'>, leaseSize: LeaseSize): SourceRateLimits {
  // A bucket has one window length, so only its current window's lease is kept.
  const leases = new Map<string, Lease>();

  async function takeLease(bucket: string, windowMs: number, limit: number, lease: Lease): Promise<void> {
    const size = leaseSize(limit);
    const total = await windows.add(bucket, windowMs, lease.windowStart, size);
    const granted = Math.min(size, Math.max(0, limit - (total - size)));
    lease.left += granted;
    if (granted < size) lease.full = true;
  }

  return {
    async take(bucket, windowMs, limit, nowMs) {
      const windowStart = nowMs - (nowMs % windowMs);
      for (;;) {
        let lease = leases.get(bucket);
        // A request read its clock before a later window's lease was taken: it counts in that window.
        if (!lease || lease.windowStart < windowStart) {
          lease = { windowStart, left: 0, full: false };
          leases.set(bucket, lease);
        }
        if (lease.left > 0) {
          lease.left -= 1;
          return true;
        }
        if (lease.full) return false;
        if (!lease.taking) {
          const current = lease;
          current.taking = takeLease(bucket, windowMs, limit, current).finally(() => (current.taking = undefined));
        }
        await lease.taking;
      }
    },
  };
}
