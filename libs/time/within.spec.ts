import { expect } from 'chai';
import { TimedOutError, within } from './within.js';

describe('within', () => {
  it('answers what the promise answers when it settles first', async () => {
    expect(await within(1_000, Promise.resolve('answer'), 'the store')).to.equal('answer');
  });

  it("passes the promise's own failure on", async () => {
    const failure = new Error('refused');
    const error = await within(1_000, Promise.reject(failure), 'the store').catch((caught: unknown) => caught);
    expect(error).to.equal(failure);
  });

  it('rejects with a retriable TimedOutError naming what did not answer once the time passes first', async () => {
    const error = await within(10, new Promise<never>(() => undefined), 'the broker').catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(TimedOutError);
    expect(error).to.include({ what: 'the broker', ms: 10, code: 'TIMED_OUT', retriable: true });
    expect((error as Error).message).to.equal('the broker gave no answer within 10 ms');
  });
});
