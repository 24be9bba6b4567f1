import { expect } from 'chai';
import { createMemoryRateWindows } from '../../libs/store/memory-rate-windows.js';
import type { RateWindows } from '../../libs/store/rate-windows.js';
import { hundredthLeases, leasedRateLimits, oneHitLeases } from './source-rate-limits.js';

const SECOND = 1000;
const NOW = Date.UTC(2025, 0, 15, 12) + 250;

/** Windows shared by the gateways of a test, as the store's are, counting how often each is asked. */
function sharedWindows() {
  const windows = createMemoryRateWindows();
  const counted = { adds: 0 };
  const shared: Pick<RateWindows, 'add'> = {
    add: (...args) => {
      counted.adds += 1;
      return windows.add(...args);
    },
  };
  return { shared, counted };
}

async function takeMany(limits: ReturnType<typeof leasedRateLimits>, count: number, limit: number, nowMs = NOW): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < count; i++) if (await limits.take('s:src', SECOND, limit, nowMs)) admitted += 1;
  return admitted;
}

describe('source rate limits over leased windows', () => {
  it('admits exactly the limit in a window with one gateway, refuses the rest, and admits again in the next window', async () => {
    const { shared } = sharedWindows();
    const limits = leasedRateLimits(shared, hundredthLeases);
    expect(await takeMany(limits, 300, 250)).to.equal(250);
    expect(await limits.take('s:src', SECOND, 250, NOW + SECOND)).to.equal(true);
  });

  it('asks the shared windows once a lease, a hundredth of the limit, and not at all once a window is full', async () => {
    const { shared, counted } = sharedWindows();
    expect(await takeMany(leasedRateLimits(shared, hundredthLeases), 3_000, 2_000)).to.equal(2_000);
    // 100 leases of 20, and one that found the window full.
    expect(counted.adds).to.equal(101);
  });

  it('never admits more than the limit across gateways, and refuses early at most a lease less one for each other gateway', async () => {
    const { shared } = sharedWindows();
    const gateways = [leasedRateLimits(shared, hundredthLeases), leasedRateLimits(shared, hundredthLeases), leasedRateLimits(shared, hundredthLeases)];
    let admitted = 0;
    for (let i = 0; i < 1_500; i++) if (await gateways[i % 3]!.take('s:src', SECOND, 1_000, NOW)) admitted += 1;
    expect(admitted).to.be.at.most(1_000).and.at.least(1_000 - 2 * 9);
  });

  it('lets requests that arrive while a lease is being taken wait for it instead of taking their own', async () => {
    const { shared, counted } = sharedWindows();
    const limits = leasedRateLimits(shared, hundredthLeases);
    const answers = await Promise.all(Array.from({ length: 20 }, () => limits.take('s:src', SECOND, 2_000, NOW)));
    expect(answers.every(Boolean)).to.equal(true);
    expect(counted.adds).to.equal(1);
  });

  it('counts one hit at a time with one-hit leases: exact under concurrent requests', async () => {
    const { shared, counted } = sharedWindows();
    const limits = leasedRateLimits(shared, oneHitLeases);
    const answers = await Promise.all(Array.from({ length: 20 }, () => limits.take('s:src', SECOND, 5, NOW)));
    expect(answers.filter(Boolean)).to.have.length(5);
    expect(counted.adds).to.equal(6);
  });

  it('counts a request whose clock was read before a later window was leased in that later window', async () => {
    const { shared } = sharedWindows();
    const limits = leasedRateLimits(shared, oneHitLeases);
    expect(await limits.take('s:src', SECOND, 1, NOW + SECOND)).to.equal(true);
    expect(await limits.take('s:src', SECOND, 1, NOW)).to.equal(false);
  });
});
