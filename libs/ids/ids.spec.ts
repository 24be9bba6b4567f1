import { expect } from 'chai';
import { isId, newId } from './ids.js';

describe('newId', () => {
  it('gives ids of the prefix and shape isId accepts', () => {
    const id = newId('evt');
    expect(isId('evt', id), id).to.equal(true);
    expect(isId('src', id)).to.equal(false);
  });

  it('sorts ids in the order they were made, also within one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => newId('evt'));
    expect(new Set(ids).size).to.equal(ids.length);
    expect([...ids].sort()).to.deep.equal(ids);
  });

  it('spreads the random part of ids made in different milliseconds over every character', async () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      // A new millisecond draws a new random part; within one, monotonic ids only increment it.
      await new Promise((resolve) => setTimeout(resolve, 1));
      for (const char of newId('evt').slice(14, 29)) seen.set(char, (seen.get(char) ?? 0) + 1);
    }
    // 600 draws over 32 characters: each expected about 19 times; all 32 appear unless the draw is skewed.
    expect(seen.size).to.equal(32);
    expect(Math.max(...seen.values())).to.be.below(50);
  });
});
