import { expect } from 'chai';
import { createdId, startApiHarness, type ApiHarness } from '../../testing/api-harness.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import { createKeyRateLimits } from './key-rate-limits.js';

const RATE = 100;

describeEachStore('API rate limit per key', (target) => {
  let h: ApiHarness;
  let clock = 1_000_000;

  before(async function () {
    // The relay's default rate, on a clock held still: a burst is as many calls as a test makes.
    h = await startApiHarness(this, target, { apiRequestsPerSecond: RATE, apiClock: () => clock });
  });

  after(async () => {
    await h?.stop();
  });

  /** Makes `count` calls with the key in one instant; returns the statuses. */
  async function burst(count: number, key = h.keyA): Promise<number[]> {
    const statuses: number[] = [];
    for (let n = 0; n < count; n += 1) statuses.push((await h.api('GET', '/api/sources?pageSize=1', { key })).status);
    return statuses;
  }

  it(`lets a key burst to ${2 * RATE} calls, then answers 429 RATE_LIMITED with retryAfter and Retry-After`, async () => {
    clock += 60_000;
    expect(new Set(await burst(2 * RATE))).to.deep.equal(new Set([200]));
    const refused = await h.api('GET', '/api/sources');
    expect(refused.status).to.equal(429);
    expect(refused.body).to.include({ error: 'Too Many Requests', code: 'RATE_LIMITED', retryAfter: 1 });
    expect(refused.headers['retry-after']).to.equal('1');
    // Writes are refused before they change anything.
    const write = await h.api('POST', '/api/sources', { body: { name: 'Refused', slug: 'refused' } });
    expect(write.status).to.equal(429);
    clock += 60_000;
    expect((await h.api('GET', '/api/sources?search=refused')).body.pagination.total).to.equal(0);
  });

  it(`refills at ${RATE} calls a second`, async () => {
    clock += 60_000;
    await burst(2 * RATE);
    clock += 100;
    expect(await burst(RATE / 10 + 1)).to.deep.equal([...Array(RATE / 10).fill(200), 429]);
  });

  it("counts each key on its own: one key's burst leaves another's calls alone", async () => {
    clock += 60_000;
    const readKey = (await h.api('POST', '/api/keys', { body: { name: 'reader', scope: 'read' } })).body.key as string;
    await burst(2 * RATE + 1);
    expect(await burst(3, readKey)).to.deep.equal([200, 200, 200]);
    expect(await burst(1, h.keyB)).to.deep.equal([200]);
  });

  it('counts only authenticated calls: an unknown key is 401 and spends no key\'s calls', async () => {
    clock += 60_000;
    for (let n = 0; n < 2 * RATE + 1; n += 1) expect((await h.api('GET', '/api/sources', { key: 'rk_not_a_key_000000000000' })).status).to.equal(401);
    expect(await burst(1)).to.deep.equal([200]);
    expect(await createdId(h.api, '/api/destinations', { name: 'After the unknown key', url: 'https://after.example.com' })).to.match(/^dst_/);
  });
});

describe('createKeyRateLimits', () => {
  it('drops the buckets of keys that have been idle long enough to refill, so memory follows the keys in use', () => {
    let now = 0;
    const limits = createKeyRateLimits({ requestsPerSecond: 10, now: () => now, sweepEveryMs: 1000 });
    for (let key = 0; key < 1000; key += 1) expect(limits.take(`key_${key}`)).to.equal(0);
    expect(limits.size()).to.equal(1000);
    // Two seconds refill a bucket of 20 at 10 a second; the next take after the sweep interval drops the full ones.
    now += 2000;
    limits.take('key_busy');
    expect(limits.size()).to.equal(1);
  });

  it('answers the wait until the next call in ms once the burst is spent', () => {
    const limits = createKeyRateLimits({ requestsPerSecond: 10, now: () => 0 });
    for (let n = 0; n < 20; n += 1) expect(limits.take('key')).to.equal(0);
    expect(limits.take('key')).to.equal(100);
  });
});
