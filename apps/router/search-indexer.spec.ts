import { expect } from 'chai';
import { createLogger } from '../../libs/logging/logger.js';
import { createRelayMetrics } from '../../libs/metrics/relay-metrics.js';
import { searchBatchSize } from '../../libs/store/search-index.js';
import { insertEventRow, openStoreFixture, type StoreFixture } from '../../libs/testing/store-fixtures.js';
import { describeEachStore } from '../../libs/testing/store-targets.js';
import type { Schedule } from '../../libs/time/schedule.js';
import { createSearchIndexer } from './search-indexer.js';

describeEachStore('search indexer', (target) => {
  let fixture: StoreFixture;
  let sourceId: string;

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sourceId = (await fixture.createSource()).id;
  });

  afterEach(async () => {
    await fixture?.close();
  });

  const store = (count: number) => Promise.all(Array.from({ length: count }, (_, i) => insertEventRow(fixture.store.sql, fixture.org.id, sourceId, `{"n":${i}}`)));

  /**
   * The indexer on `now`, on a machine as busy as `busy` says (idle unless told); the rests it takes after its
   * batches are recorded and end at once.
   */
  function indexer(now?: () => number, busy: { share: number; maxDeferredLag?: number } = { share: 0 }) {
    const metrics = createRelayMetrics({ defaultMetrics: false });
    const rests: number[] = [];
    const schedule: Schedule = (run, ms) => {
      rests.push(ms);
      run();
      return () => undefined;
    };
    const running = createSearchIndexer({ sql: fixture.store.sql, lag: metrics.searchIndexLag, logger: createLogger({ level: 'silent' }), passBudgetMs: 1000, now, schedule,
      machineBusy: () => busy.share, maxDeferredLag: busy.maxDeferredLag });
    const lagMetric = async () => (await metrics.searchIndexLag.get()).values[0]?.value;
    return { running, lagMetric, rests };
  }

  it('indexes everything stored since the last pass and publishes a lag of 0', async () => {
    await store(3);
    const { running, lagMetric } = indexer();
    expect(await running.runOnce()).to.deep.equal({ indexed: 3, lag: 0, cutShort: false, deferred: false });
    expect(await lagMetric()).to.equal(0);
  });

  it('stops a pass at its budget and publishes the backlog left, so a lag shows while it lasts', async () => {
    const batch = searchBatchSize(fixture.store.sql);
    await store(batch * 2 + 1);
    // Each reading of the clock is 600 ms later: the budget of 1000 ms allows one batch.
    let readings = 0;
    const { running, lagMetric } = indexer(() => readings++ * 600);
    expect(await running.runOnce()).to.deep.equal({ indexed: batch, lag: batch + 1, cutShort: true, deferred: false });
    expect(await lagMetric()).to.equal(batch + 1);
  });

  it('rests after each batch as long as the batch took, so other writers find the store free at least half the time', async () => {
    const batch = searchBatchSize(fixture.store.sql);
    await store(batch * 2);
    // Each reading of the clock is 7 ms later: the pass reads it at its start, and at each batch's start and end.
    let readings = 0;
    const { running, rests } = indexer(() => readings++ * 7);
    expect(await running.runOnce()).to.deep.equal({ indexed: batch * 2, lag: 0, cutShort: false, deferred: false });
    expect(rests).to.deep.equal([7, 7]);
  });

  it('gives way while the machine is busy: a pass indexes nothing and publishes the lag, the first with cores to spare catches up', async () => {
    await store(5);
    const machine = { share: 0.9 };
    const { running, lagMetric } = indexer(undefined, machine);
    expect(await running.runOnce()).to.deep.equal({ indexed: 0, lag: 5, cutShort: false, deferred: true });
    expect(await lagMetric()).to.equal(5);
    machine.share = 0.5;
    expect(await running.runOnce()).to.deep.equal({ indexed: 5, lag: 0, cutShort: false, deferred: false });
    expect(await lagMetric()).to.equal(0);
  });

  it('indexes on a busy machine once the lag reaches its cap, so a search never reads more of the tail one by one', async () => {
    await store(4);
    const { running } = indexer(undefined, { share: 1, maxDeferredLag: 4 });
    expect(await running.runOnce()).to.deep.equal({ indexed: 4, lag: 0, cutShort: false, deferred: false });
  });
});
