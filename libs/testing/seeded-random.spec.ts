import { expect } from 'chai';
import { seededRandom } from './seeded-random.js';

describe('seededRandom', () => {
  it('gives the same sequence for the same seed, and another for another seed', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed).next);
    expect(draw(7)).to.deep.equal(draw(7));
    expect(draw(7)).not.to.deep.equal(draw(8));
  });

  it('keeps int within its bounds and reaches both ends', () => {
    const random = seededRandom(1);
    const seen = new Set(Array.from({ length: 1000 }, () => random.int(3, 6)));
    expect([...seen].sort()).to.deep.equal([3, 4, 5, 6]);
  });
});
