import { expect } from 'chai';
import { busiestSpan } from '../stats/busiest-span.js';
import { createMemoryRateWindows } from '../store/memory-rate-windows.js';
import { createDestinationRateLimiters, createSharedRateLimiters, createTokenBucket, sharedRateWindow } from './token-bucket.js';

describe('createTokenBucket', () => {
  it('allows one second worth of requests at once, then says how long to wait for the next token', () => {
    const bucket = createTokenBucket({ ratePerMinute: 120 });
    expect([bucket.take(0), bucket.take(0)]).to.deep.equal([0, 0]);
    expect(bucket.take(0)).to.equal(500);
    expect(bucket.take(200)).to.equal(300);
    expect(bucket.take(500)).to.equal(0);
  });

  it('paces a slow rate with a burst of one', () => {
    const bucket = createTokenBucket({ ratePerMinute: 10 });
    expect(bucket.take(0)).to.equal(0);
    expect(bucket.take(1000)).to.equal(5000);
    expect(bucket.take(6000)).to.equal(0);
  });

  it('never lets more than about the rate through in a minute', () => {
    const bucket = createTokenBucket({ ratePerMinute: 60 });
    let allowed = 0;
    for (let now = 0; now < 60_000; now += 10) if (bucket.take(now) === 0) allowed++;
    expect(allowed).to.be.within(60, 61);
  });

  it('refills no further than its burst after a long idle time', () => {
    const bucket = createTokenBucket({ ratePerMinute: 60, burst: 3 });
    const taken = [0, 0, 0, 0].map(() => bucket.take(3_600_000));
    expect(taken).to.deep.equal([0, 0, 0, 1000]);
  });

  it('does not drain when the clock steps back', () => {
    const bucket = createTokenBucket({ ratePerMinute: 60 });
    expect(bucket.take(10_000)).to.equal(0);
    expect(bucket.take(5_000)).to.equal(1000);
    expect(bucket.take(6_000)).to.equal(0);
  });

  it('is full again once it has refilled to capacity', () => {
    const bucket = createTokenBucket({ ratePerMinute: 60 });
    expect(bucket.isFull(0)).to.equal(true);
    bucket.take(0);
    expect(bucket.isFull(999)).to.equal(false);
    expect(bucket.isFull(1000)).to.equal(true);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => createTokenBucket({ ratePerMinute: 0 })).to.throw(RangeError);
  });
});

describe('createDestinationRateLimiters', () => {
  it('keeps one budget per destination', async () => {
    const limiters = createDestinationRateLimiters();
    expect(await limiters.take('dst_a', 60, 0)).to.equal(0);
    expect(await limiters.take('dst_a', 60, 0)).to.equal(1000);
    expect(await limiters.take('dst_b', 60, 0)).to.equal(0);
  });

  it('never waits for an unlimited destination', async () => {
    const limiters = createDestinationRateLimiters();
    for (let i = 0; i < 100; i++) expect(await limiters.take('dst_a', null, 0)).to.equal(0);
  });

  it('keeps a spent budget through an idle sweep, and starts afresh after one that found it refilled', async () => {
    const limiters = createDestinationRateLimiters();
    expect(await limiters.take('dst_a', 60, 0)).to.equal(0);
    limiters.evictIdle(500);
    expect(await limiters.take('dst_a', 60, 500)).to.equal(500);
    limiters.evictIdle(2000);
    expect(await limiters.take('dst_a', 60, 2000)).to.equal(0);
    expect(await limiters.take('dst_a', 60, 2000)).to.equal(1000);
  });

  it('starts a new budget when the destination rate changes', async () => {
    const limiters = createDestinationRateLimiters();
    expect(await limiters.take('dst_a', 1, 0)).to.equal(0);
    expect(await limiters.take('dst_a', 1, 0)).to.equal(60_000);
    expect(await limiters.take('dst_a', 600, 0)).to.equal(0);
    expect(await limiters.take('dst_a', 600, 0)).to.equal(0);
  });
});

describe('createSharedRateLimiters', () => {
  /**
   * Deliverers drawing on one set of windows try to send every 10 ms for `minutes` (a clock of the
   * test's own); returns the times of the requests each let through.
   */
  async function sendFlatOut(ratePerMinute: number, deliverers: number, minutes: number): Promise<number[]> {
    const windows = createMemoryRateWindows();
    const limiters = Array.from({ length: deliverers }, () => createSharedRateLimiters(windows));
    const sent: number[] = [];
    for (let now = 0; now < minutes * 60_000; now += 10) {
      for (const limiter of limiters) if ((await limiter.take('dst_a', ratePerMinute, now)) === 0) sent.push(now);
    }
    return sent;
  }

  for (const rate of [5, 15, 60, 1000]) {
    it(`holds ${rate}/min within 10% (or one request) over any minute for three deliverers together`, async () => {
      const sent = await sendFlatOut(rate, 3, 5);
      expect(busiestSpan(sent, 60_000)).to.be.at.most(Math.max(rate + 1, Math.floor(rate * 1.1)));
      // And uses the rate: without the shared windows each deliverer alone would send it.
      expect(sent.length).to.be.at.least(Math.floor(rate * 5 * 0.9));
    });
  }

  it('lets one window through a tenth of a minute rate, or one request per window under 10 a minute', () => {
    expect(sharedRateWindow(600)).to.deep.equal({ windowMs: 6000, perWindow: 60 });
    expect(sharedRateWindow(15)).to.deep.equal({ windowMs: 4000, perWindow: 1 });
    expect(sharedRateWindow(1)).to.deep.equal({ windowMs: 60_000, perWindow: 1 });
  });

  it('never counts an unlimited destination', async () => {
    const counted: string[] = [];
    const limiter = createSharedRateLimiters({ hit: async (bucket) => (counted.push(bucket), 1) });
    expect(await limiter.take('dst_a', null, 0)).to.equal(0);
    expect(counted).to.deep.equal([]);
  });
});
