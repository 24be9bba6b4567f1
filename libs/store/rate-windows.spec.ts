import { expect } from 'chai';
import { describeEachStore } from '../testing/store-targets.js';
import { createMemoryRateWindows } from './memory-rate-windows.js';
import { createRateWindows, type RateWindows } from './rate-windows.js';
import { openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';

const SECOND = 1000;
const NOW = Date.UTC(2025, 0, 15, 12) + 250;

let bucketCount = 0;
const bucket = () => `test:${++bucketCount}`;

/** What every RateWindows adapter does, the store's and the in-memory one alike. */
function countsLikeRateWindows(open: () => Pick<RateWindows, 'hit' | 'add'>): void {
  let windows: Pick<RateWindows, 'hit' | 'add'>;
  beforeEach(() => {
    windows = open();
  });

  it('counts hits within a window and starts again at 1 in the next window', async () => {
    const b = bucket();
    expect(await windows.hit(b, SECOND, NOW)).to.equal(1);
    expect(await windows.hit(b, SECOND, NOW + 500)).to.equal(2);
    expect(await windows.hit(b, SECOND, NOW + 750)).to.equal(1);
  });

  it('gives 20 concurrent hits on one window the counts 1 to 20, each once', async () => {
    const b = bucket();
    const counts = await Promise.all(Array.from({ length: 20 }, () => windows.hit(b, SECOND, NOW)));
    expect([...counts].sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('counts concurrent hits on different buckets and windows apart', async () => {
    const [a, b, perMinute] = [bucket(), bucket(), bucket()];
    const counts = await Promise.all([
      windows.hit(a, SECOND, NOW),
      windows.hit(b, SECOND, NOW),
      windows.hit(perMinute, 60 * SECOND, NOW),
      windows.hit(a, SECOND, NOW),
      windows.hit(a, SECOND, NOW + SECOND),
    ]);
    expect(counts).to.deep.equal([1, 1, 1, 2, 1]);
  });

  it('adds several hits at once, and hits made together with them are counted in order', async () => {
    const b = bucket();
    expect(await windows.add(b, SECOND, NOW, 20)).to.equal(20);
    expect(await Promise.all([windows.add(b, SECOND, NOW, 20), windows.hit(b, SECOND, NOW), windows.add(b, SECOND, NOW, 5)])).to.deep.equal([40, 41, 46]);
  });
}

describeEachStore('RateWindows', (target) => {
  let fixture: StoreFixture;
  let windows: RateWindows;

  before(async function () {
    fixture = await openStoreFixture(this, target);
    windows = createRateWindows(fixture.store.sql);
  });

  after(async () => {
    await fixture?.close();
  });

  countsLikeRateWindows(() => windows);

  it('purgeBefore deletes the windows that started before the time given', async () => {
    const b = bucket();
    await windows.hit(b, SECOND, NOW - 10 * SECOND);
    await windows.hit(b, SECOND, NOW);
    expect(await windows.purgeBefore(NOW - SECOND)).to.be.at.least(1);
    const rows = await fixture.store.sql.all<{ window_start: number }>('SELECT window_start FROM rate_windows WHERE bucket = ?', [b]);
    expect(rows.map((row) => Number(row.window_start))).to.deep.equal([NOW - (NOW % SECOND)]);
  });
});

describe('RateWindows in memory', () => {
  countsLikeRateWindows(createMemoryRateWindows);
});
