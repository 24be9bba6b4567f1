import { expect } from 'chai';
import { nearestRank } from './nearest-rank.js';

describe('nearestRank', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('picks the smallest value with at least p% of the values at or below it', () => {
    expect(nearestRank(hundred, 50)).to.equal(50);
    expect(nearestRank(hundred, 99)).to.equal(99);
    expect(nearestRank(hundred, 100)).to.equal(100);
    expect(nearestRank([3, 7, 9], 50)).to.equal(7);
  });

  it('gives the smallest value for a tiny p and NaN for no values', () => {
    expect(nearestRank(hundred, 0.001)).to.equal(1);
    expect(nearestRank([], 50)).to.be.NaN;
  });
});
