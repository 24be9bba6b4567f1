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
  /** Refilled to capacity by `nowMs`: the bucket is then as new. */
  isFull(nowMs: number): boolean;
}

/** A token bucket refilled continuously at `ratePerMinute`; it starts full. */
export function createTokenBucket({ ratePerMinute, burst }: TokenBucketOptions): TokenBucket {
  if (!(ratePerMinute > 0)) throw new RangeError('ratePerMinute must be positive');
  const capacity = burst ?? Math.max(1, Math.ceil(ratePerMinute / 60));
  const msPerToken = 60_000 / ratePerMinute;
  let tokens = capacity;
  let refilledAt: number | undefined;
  // A clock that steps back refills nothing rather than draining the bucket.
  const tokensAt = (nowMs: number) => Math.min(capacity, tokens + (refilledAt === undefined ? 0 : Math.max(0, nowMs - refilledAt)) / msPerToken);

  return {
    ratePerMinute,
    take(nowMs) {
      tokens = tokensAt(nowMs);
      refilledAt = nowMs;
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - tokens) * msPerToken);
    },
    isFull: (nowMs) => tokensAt(nowMs) >= capacity,
  };
}

export interface DestinationRateLimiters {
  /** As TokenBucket.take for the destination; always 0 for an unlimited (null) rate. */
  take(destinationId: string, ratePerMinute: number | null, nowMs: number): Promise<number>;
  forget(destinationId: string): void;
  /** Drops the buckets refilled to capacity by `nowMs` (as new: one is made again on the next take). */
  evictIdle(nowMs: number): void;
}

/** One bucket per destination, replaced when the destination's rate changes: the limit of one deliverer. */
export function createDestinationRateLimiters(): DestinationRateLimiters {
  const buckets = new Map<string, TokenBucket>();
  return {
    async take(destinationId, ratePerMinute, nowMs) {
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
    evictIdle(nowMs) {
      for (const [destinationId, bucket] of buckets) if (bucket.isFull(nowMs)) buckets.delete(destinationId);
    },
  };
}

/** What the shared limit counts requests with: the store's fixed windows (libs/store/rate-windows.ts). */
export interface SharedWindows {
  hit(bucket: string, windowMs: number, nowMs: number): Promise<number>;
}

/**
 * The fixed window a shared rate is counted in: a tenth of a minute holding a tenth of the rate, or for
 * rates under 10 a minute, one request per window. Any minute overlaps at most one window more than
 * fits in it, so no minute gets more than the rate plus one window's share (10%, or one request).
 */
export function sharedRateWindow(ratePerMinute: number): { windowMs: number; perWindow: number } {
  const perWindow = Math.max(1, Math.floor(ratePerMinute / 10));
  return { windowMs: Math.round((60_000 * perWindow) / ratePerMinute), perWindow };
}

/**
 * Every deliverer's requests to a destination drawn from one rate: each request passes the process's
 * own bucket (which keeps it smooth) and is then counted in the destination's shared window; one past
 * the window's share waits for the next window. Used when several deliverers may share a destination's
 * partitions (Kafka), as the gateway's source limits are.
 */
export function createSharedRateLimiters(windows: SharedWindows): DestinationRateLimiters {
  const local = createDestinationRateLimiters();
  return {
    async take(destinationId, ratePerMinute, nowMs) {
      const localWaitMs = await local.take(destinationId, ratePerMinute, nowMs);
      if (localWaitMs > 0 || ratePerMinute === null) return localWaitMs;
      const { windowMs, perWindow } = sharedRateWindow(ratePerMinute);
      const hits = await windows.hit(`d:${destinationId}`, windowMs, nowMs);
      return hits <= perWindow ? 0 : windowMs - (nowMs % windowMs);
    },
    forget: local.forget,
    evictIdle: local.evictIdle,
  };
}
