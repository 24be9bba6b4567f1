import type { Context, Next } from 'koa';
import { createTokenBucket, type TokenBucket } from '../../libs/delivery/token-bucket.js';
import { RateLimitedError } from '../../libs/errors/errors.js';
import type { ApiPrincipal } from '../../libs/keys/key-authenticator.js';

export interface KeyRateLimitsOptions {
  /** RELAY_API_REQUESTS_PER_SECOND: each key's sustained rate; it may burst to twice that. */
  requestsPerSecond: number;
  now?: () => number;
  /** How often, at most, buckets refilled to capacity are dropped (default 10 s). */
  sweepEveryMs?: number;
}

export interface KeyRateLimits {
  /** 0 when the key may make a request now (it is counted), else the ms until it may. */
  take(keyId: string): number;
  /** Buckets held now: one per key seen since its bucket last refilled. */
  size(): number;
}

/**
 * One token bucket per API key, in this process (docs/decisions, "API rate limit per key"). A bucket
 * refilled to capacity is as new, so it is dropped on the next sweep: only keys that made requests in
 * the last few seconds hold memory, and only authenticated keys get one at all.
 */
export function createKeyRateLimits({ requestsPerSecond, now = Date.now, sweepEveryMs = 10_000 }: KeyRateLimitsOptions): KeyRateLimits {
  const buckets = new Map<string, TokenBucket>();
  let sweptAt = now();
  const sweep = (at: number) => {
    if (at - sweptAt < sweepEveryMs) return;
    sweptAt = at;
    for (const [keyId, bucket] of buckets) if (bucket.isFull(at)) buckets.delete(keyId);
  };
  return {
    take(keyId) {
      const at = now();
      sweep(at);
      let bucket = buckets.get(keyId);
      if (!bucket) {
        bucket = createTokenBucket({ ratePerMinute: requestsPerSecond * 60, burst: requestsPerSecond * 2 });
        buckets.set(keyId, bucket);
      }
      return bucket.take(at);
    },
    size: () => buckets.size,
  };
}

/** After authentication: a key past its rate gets 429 RATE_LIMITED with Retry-After. */
export function limitKeyRate(limits: KeyRateLimits) {
  return async function requireRate(ctx: Context, next: Next): Promise<void> {
    const waitMs = limits.take((ctx.state.tenant as ApiPrincipal).keyId);
    if (waitMs > 0) throw new RateLimitedError(waitMs, 'Too many requests with this API key; retry after the time given');
    await next();
  };
}
