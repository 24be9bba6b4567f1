export interface TokenBucketOptions {
  ratePerMinute: number;
  /**
   * Tokens that may be spent at once. Default: one second's worth (at least 1), so over any
   * 60 s window a destination sees at most about `ratePerMinute` requests, not twice that.
   */
  burst?: number;
}

export interface TokenBucket {
  readonly ratePerMinute: number;
  /** 0 when a request may go now (a token is spent), else the ms until one will be available. */
  take(nowMs: number): number;
}

/** A token bucket refilled continuously at `ratePerMinute`; it starts full. */
export function createTokenBucket({ ratePerMinute, burst }: TokenBucketOptions): TokenBucket {
  if (!(ratePerMinute > 0)) throw new RangeError('ratePerMinute must be positive');
  const capacity = burst ?? Math.max(1, Math.ceil(ratePerMinute / 60));
  const msPerToken = 60_000 / ratePerMinute;
  let tokens = capacity;
  let refilledAt: number | undefined;

  return {
    ratePerMinute,
    take(nowMs) {
      // A clock that steps back refills nothing rather than draining the bucket.
      const elapsed = refilledAt === undefined ? 0 : Math.max(0, nowMs - refilledAt);
      tokens = Math.min(capacity, tokens + elapsed / msPerToken);
      refilledAt = nowMs;
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - tokens) * msPerToken);
    },
  };
}

export interface DestinationRateLimiters {
  /** As TokenBucket.take for the destination; always 0 for an unlimited (null) rate. */
  take(destinationId: string, ratePerMinute: number | null, nowMs: number): number;
  forget(destinationId: string): void;
}

/** One bucket per destination, replaced when the destination's rate changes. */
export function createDestinationRateLimiters(): DestinationRateLimiters {
  const buckets = new Map<string, TokenBucket>();
  return {
    take(destinationId, ratePerMinute, nowMs) {
      if (ratePerMinute === null) {
        buckets.delete(destinationId);
        return 0;
      }
      let bucket = buckets.get(destinationId);
      if (bucket?.ratePerMinute !== ratePerMinute) {
        bucket = createTokenBucket({ ratePerMinute });
        buckets.set(destinationId, bucket);
      }
      return bucket.take(nowMs);
    },
    forget(destinationId) {
      buckets.delete(destinationId);
    },
  };
}
