import { expect } from 'chai';
import type { AttemptOutcome } from './attempt-outcome.js';
import { parseRetryAfterMs } from './retry-after.js';
import { nextAttemptPlan, retryDelayMs, retryPolicySchema, tierFor, type RetryPolicy } from './retry-schedule.js';
import { RETRY_TIER_TOPICS, retryTierTopic } from '../pipeline/topology.js';

const defaults: RetryPolicy = retryPolicySchema.parse({});
const noJitter = { jitter: 0 };
const failed500: Pick<AttemptOutcome, 'ok' | 'statusCode' | 'retryAfterMs'> = { ok: false, statusCode: 500 };

describe('retryPolicySchema', () => {
  it('fills an empty policy with the defaults', () => {
    expect(defaults).to.deep.equal({ maxRetries: 5, initialDelay: 1000, maxDelay: 60000, backoffMultiplier: 2 });
  });

  it('fills the omitted fields of a partial policy', () => {
    expect(retryPolicySchema.parse({ maxRetries: 3 })).to.deep.equal({ maxRetries: 3, initialDelay: 1000, maxDelay: 60000, backoffMultiplier: 2 });
  });

  it('accepts the bounds', () => {
    for (const policy of [
      { maxRetries: 0, initialDelay: 100, maxDelay: 100, backoffMultiplier: 1 },
      { maxRetries: 20, initialDelay: 3_600_000, maxDelay: 86_400_000, backoffMultiplier: 10 },
      { backoffMultiplier: 1.5 },
    ]) {
      expect(retryPolicySchema.safeParse(policy).success, JSON.stringify(policy)).to.equal(true);
    }
  });

  it('refuses values past the bounds, naming the field', () => {
    for (const [policy, field] of [
      [{ maxRetries: -1 }, 'maxRetries'],
      [{ maxRetries: 21 }, 'maxRetries'],
      [{ maxRetries: 2.5 }, 'maxRetries'],
      [{ initialDelay: 99 }, 'initialDelay'],
      [{ initialDelay: 3_600_001, maxDelay: 86_400_000 }, 'initialDelay'],
      [{ maxDelay: 86_400_001 }, 'maxDelay'],
      [{ backoffMultiplier: 0.5 }, 'backoffMultiplier'],
      [{ backoffMultiplier: 11 }, 'backoffMultiplier'],
      [{ maxRetries: '5' }, 'maxRetries'],
    ] as const) {
      const result = retryPolicySchema.safeParse(policy);
      expect(result.success, JSON.stringify(policy)).to.equal(false);
      expect(result.error!.issues.map((issue) => issue.path.join('.')), JSON.stringify(policy)).to.include(field);
    }
  });

  it('refuses a maxDelay below initialDelay, also when maxDelay is the default', () => {
    for (const policy of [{ initialDelay: 5000, maxDelay: 4000 }, { initialDelay: 120_000 }]) {
      const result = retryPolicySchema.safeParse(policy);
      expect(result.success, JSON.stringify(policy)).to.equal(false);
      expect(result.error!.issues[0]!.path).to.deep.equal(['maxDelay']);
    }
  });

  it('refuses unknown fields', () => {
    const result = retryPolicySchema.safeParse({ maxRetries: 3, jitter: 0.5 });
    expect(result.success).to.equal(false);
  });
});

describe('retryDelayMs', () => {
  it('doubles from initialDelay and stops at maxDelay with the default policy', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelayMs(defaults, n, noJitter));
    expect(delays).to.deep.equal([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
  });

  it('follows the policy multiplier', () => {
    const policy = retryPolicySchema.parse({ initialDelay: 500, backoffMultiplier: 3, maxDelay: 10_000 });
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(policy, n, noJitter))).to.deep.equal([500, 1500, 4500, 10_000, 10_000]);
  });

  it('moves the delay by at most ±jitter of itself, and never above maxDelay', () => {
    expect(retryDelayMs(defaults, 2, { jitter: 0.1, random: () => 0 })).to.equal(1800);
    expect(retryDelayMs(defaults, 2, { jitter: 0.1, random: () => 0.5 })).to.equal(2000);
    expect(retryDelayMs(defaults, 2, { jitter: 0.1, random: () => 0.999999 })).to.equal(2200);
    expect(retryDelayMs(defaults, 10, { jitter: 0.1, random: () => 0.999999 })).to.equal(60_000);
    expect(retryDelayMs(defaults, 10, { jitter: 0.1, random: () => 0 })).to.equal(54_000);
  });
});

describe('nextAttemptPlan', () => {
  const nowMs = 1_700_000_000_000;
  const options = { ...noJitter, nowMs };

  it('a 2xx outcome is delivered', () => {
    expect(nextAttemptPlan(defaults, 1, { ok: true, statusCode: 200 }, options)).to.deep.equal({ kind: 'delivered' });
  });

  it('retries a failed attempt with the backoff delay and a due time', () => {
    expect(nextAttemptPlan(defaults, 1, failed500, options)).to.deep.equal({ kind: 'retry', delayMs: 1000, dueAt: nowMs + 1000 });
    expect(nextAttemptPlan(defaults, 3, failed500, options)).to.deep.equal({ kind: 'retry', delayMs: 4000, dueAt: nowMs + 4000 });
  });

  it('fails a 410 Gone at once, whatever retries are left', () => {
    expect(nextAttemptPlan(defaults, 1, { ok: false, statusCode: 410 }, options)).to.deep.equal({ kind: 'failed' });
  });

  it('retries every non-2xx but 410, timeout and network error alike', () => {
    for (const outcome of [
      { ok: false, statusCode: 302 },
      { ok: false, statusCode: 400 },
      { ok: false, statusCode: 404 },
      { ok: false, statusCode: null },
    ]) {
      expect(nextAttemptPlan(defaults, 1, outcome, options).kind, JSON.stringify(outcome)).to.equal('retry');
    }
  });

  it('fails the delivery after 1 + maxRetries attempts', () => {
    expect(nextAttemptPlan(defaults, 5, failed500, options).kind).to.equal('retry');
    expect(nextAttemptPlan(defaults, 6, failed500, options)).to.deep.equal({ kind: 'failed' });
    const noRetries = retryPolicySchema.parse({ maxRetries: 0 });
    expect(nextAttemptPlan(noRetries, 1, failed500, options)).to.deep.equal({ kind: 'failed' });
  });

  it('waits at least the Retry-After of a 429 or 503', () => {
    for (const statusCode of [429, 503]) {
      const plan = nextAttemptPlan(defaults, 1, { ok: false, statusCode, retryAfterMs: 30_000 }, options);
      expect(plan, String(statusCode)).to.deep.equal({ kind: 'retry', delayMs: 30_000, dueAt: nowMs + 30_000 });
    }
  });

  it('keeps a longer backoff over a shorter Retry-After', () => {
    const plan = nextAttemptPlan(defaults, 4, { ok: false, statusCode: 429, retryAfterMs: 1000 }, options);
    expect(plan).to.deep.include({ delayMs: 8000 });
  });

  it('caps Retry-After at maxDelay', () => {
    const plan = nextAttemptPlan(defaults, 1, { ok: false, statusCode: 503, retryAfterMs: 3_600_000 }, options);
    expect(plan).to.deep.include({ delayMs: 60_000 });
  });

  it('ignores retryAfterMs on other statuses', () => {
    const plan = nextAttemptPlan(defaults, 1, { ok: false, statusCode: 500, retryAfterMs: 30_000 }, options);
    expect(plan).to.deep.include({ delayMs: 1000 });
  });
});

describe('retry tiers', () => {
  it('picks the longest tier that does not overshoot the time left', () => {
    const cases: Array<[number, string]> = [
      [1000, '1s'],
      [4999, '1s'],
      [5000, '5s'],
      [29_999, '5s'],
      [30_000, '30s'],
      [119_999, '30s'],
      [120_000, '2m'],
      [600_000, '10m'],
      [3_599_999, '10m'],
      [3_600_000, '1h'],
      [86_400_000, '1h'],
    ];
    for (const [ms, name] of cases) expect(tierFor(ms).name, String(ms)).to.equal(name);
  });

  it('uses the shortest tier when less than a second is left, or the job is already due', () => {
    for (const ms of [999, 1, 0, -500]) expect(tierFor(ms).name, String(ms)).to.equal('1s');
  });

  it('names one topic per tier', () => {
    expect(retryTierTopic(tierFor(1000))).to.equal('relay.retry.1s');
    expect(RETRY_TIER_TOPICS).to.deep.equal([
      'relay.retry.1s',
      'relay.retry.5s',
      'relay.retry.30s',
      'relay.retry.2m',
      'relay.retry.10m',
      'relay.retry.1h',
    ]);
  });
});

describe('parseRetryAfterMs', () => {
  const nowMs = Date.parse('2025-01-01T00:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfterMs('120', nowMs)).to.equal(120_000);
    expect(parseRetryAfterMs(' 0 ', nowMs)).to.equal(0);
  });

  it('reads an HTTP date as the time until it, 0 when past', () => {
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:01:30 GMT', nowMs)).to.equal(90_000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 23:00:00 GMT', nowMs)).to.equal(0);
    expect(parseRetryAfterMs('Wednesday, 01-Jan-25 00:00:10 GMT', nowMs)).to.equal(10_000);
  });

  it('gives undefined for an absent or unreadable value', () => {
    for (const value of [undefined, '', 'soon', '-5', '1.5', '2025-01-01']) expect(parseRetryAfterMs(value, nowMs), String(value)).to.equal(undefined);
  });
});
