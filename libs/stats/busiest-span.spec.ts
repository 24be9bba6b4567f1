import { expect } from 'chai';
import { busiestSpan } from './busiest-span.js';

describe('busiestSpan', () => {
  it('counts the most times within any span, whatever their order', () => {
    expect(busiestSpan([5_000, 0, 59_999, 60_000, 61_000, 119_999], 60_000)).to.equal(4);
  });

  it('answers 0 for no times and 1 for times further apart than the span', () => {
    expect(busiestSpan([], 1_000)).to.equal(0);
    expect(busiestSpan([0, 1_000, 2_000], 1_000)).to.equal(1);
  });
});
