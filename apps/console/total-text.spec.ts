import { expect } from 'chai';
import { hasNextPage, totalText } from './web/parts/total-text.js';

describe('console totals over large lists', () => {
  it('says "at least N" when the API gives its total as a lower bound, and the plain count when it is exact', () => {
    expect(totalText({ total: 1_000_000, page: 1, pageSize: 100, totalExact: false }, 'events')).to.equal('at least 1,000,000 events');
    expect(totalText({ total: 1_234, page: 1, pageSize: 100, totalExact: true }, 'events')).to.equal('1,234 events');
    expect(totalText({ total: 7, page: 1, pageSize: 20 }, 'sources')).to.equal('7 sources');
  });

  it('offers a next page past a lower-bound total while pages come back full, and only up to an exact total', () => {
    expect(hasNextPage({ total: 1_000, page: 10, pageSize: 100, totalExact: false }, 100)).to.equal(true);
    expect(hasNextPage({ total: 1_000, page: 11, pageSize: 100, totalExact: false }, 40)).to.equal(false);
    expect(hasNextPage({ total: 1_000, page: 10, pageSize: 100 }, 100)).to.equal(false);
    expect(hasNextPage({ total: 1_001, page: 10, pageSize: 100 }, 100)).to.equal(true);
  });
});
