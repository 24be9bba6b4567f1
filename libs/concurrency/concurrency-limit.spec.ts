import { expect } from 'chai';
import { KeyedConcurrencyLimits } from './concurrency-limit.js';

describe('KeyedConcurrencyLimits', () => {
  it('holds a key while a place is held or awaited, and drops it with its last place', async () => {
    const limits = new KeyedConcurrencyLimits<string>(1);
    const releaseFirst = await limits.acquire('dst_a');
    const second = limits.acquire('dst_a');
    expect(limits.activeKeys).to.equal(1);
    releaseFirst();
    // The place went straight to the waiter: the key is still in use.
    expect(limits.activeKeys).to.equal(1);
    const releaseSecond = await second;
    releaseSecond();
    expect(limits.activeKeys).to.equal(0);
  });

  it('gives a key dropped when idle a fresh limit of the same size', async () => {
    const limits = new KeyedConcurrencyLimits<string>(2);
    (await limits.acquire('dst_a'))();
    const places = [await limits.acquire('dst_a'), await limits.acquire('dst_a')];
    let third = false;
    const waiting = limits.acquire('dst_a').then((release) => {
      third = true;
      return release;
    });
    await Promise.resolve();
    expect(third, 'a third waits for one of two places').to.equal(false);
    places[0]!();
    (await waiting)();
    places[1]!();
    expect(limits.activeKeys).to.equal(0);
  });
});
