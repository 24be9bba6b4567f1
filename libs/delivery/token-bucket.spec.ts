import { expect } from 'chai';
import { createDestinationRateLimiters, createTokenBucket } from './token-bucket.js';

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

  it('refuses a rate that is not positive', () => {
    expect(() => createTokenBucket({ ratePerMinute: 0 })).to.throw(RangeError);
  });
});

describe('createDestinationRateLimiters', () => {
  it('keeps one budget per destination', () => {
    const limiters = createDestinationRateLimiters();
    expect(limiters.take('dst_a', 60, 0)).to.equal(0);
    expect(limiters.take('dst_a', 60, 0)).to.equal(1000);
    expect(limiters.take('dst_b', 60, 0)).to.equal(0);
  });

  it('never waits for an unlimited destination', () => {
    const limiters = createDestinationRateLimiters();
    for (let i = 0; i < 100; i++) expect(limiters.take('dst_a', null, 0)).to.equal(0);
  });

  it('starts a new budget when the destination rate changes', () => {
    const limiters = createDestinationRateLimiters();
    expect(limiters.take('dst_a', 1, 0)).to.equal(0);
    expect(limiters.take('dst_a', 1, 0)).to.equal(60_000);
    expect(limiters.take('dst_a', 600, 0)).to.equal(0);
    expect(limiters.take('dst_a', 600, 0)).to.equal(0);
  });
});
