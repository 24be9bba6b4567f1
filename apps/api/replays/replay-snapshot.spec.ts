import { expect } from 'chai';
import { describeEachStore } from '../../../libs/testing/store-targets.js';
import { startApiHarness, type ApiHarness } from '../../../testing/api-harness.js';
import { createSource, orgIds, seedEvent } from '../../../testing/event-fixtures.js';
import { matchingBound, snapshotEventIdsAfter, type EventFilter, type EventKey } from '../../../libs/ledger/event-queries.js';

describeEachStore('replay snapshot, copied a chunk at a time', (target) => {
  let h: ApiHarness;
  let orgId: string;
  let sourceId: string;
  let matching: string[];

  before(async function () {
    h = await startApiHarness(this, target);
    orgId = (await orgIds(h)).a;
    sourceId = (await createSource(h, { name: 'Snapshot', slug: 'snapshot' })).id;
    const other = (await createSource(h, { name: 'Other', slug: 'snapshot-other' })).id;
    const base = Date.now() - 60_000;
    matching = [];
    // Events sharing one instant: a chunk may end inside them, and the id orders them.
    for (let n = 0; n < 11; n += 1) {
      matching.push((await seedEvent(h, { orgId, sourceId, receivedAt: base + Math.floor(n / 4) * 1000 })).eventId);
      await seedEvent(h, { orgId, sourceId: other, receivedAt: base + n * 1000 });
    }
  });

  after(async () => {
    await h?.stop();
  });

  const snapshot = async (replayId: string) =>
    (await h.relay.store.sql.all<{ eventId: string }>('SELECT event_id AS "eventId" FROM replay_events WHERE replay_id = ? ORDER BY event_id', [replayId])).map(
      (row) => row.eventId,
    );

  async function copyInChunks(replayId: string, filter: EventFilter, until: EventKey, limit: number): Promise<number> {
    let after: EventKey | null = null;
    for (let chunks = 1; ; chunks += 1) {
      const { last, done } = await snapshotEventIdsAfter(h.relay.store.sql, orgId, filter, replayId, { after, until, limit });
      if (done) return chunks;
      after = last;
    }
  }

  it('copies every event matching at creation once, in chunks, and none that arrives after', async () => {
    const filter = { sourceId };
    const { matched, newest } = await matchingBound(h.relay.store.sql, orgId, filter);
    expect(matched).to.equal(11);
    expect(newest!.id).to.equal([...matching].sort().at(-1));
    // Stored after the bound was taken: not one of the job's events.
    const late = await seedEvent(h, { orgId, sourceId, receivedAt: Date.now() });

    const chunks = await copyInChunks('rpl_snapshot_chunks', filter, newest!, 3);
    expect(chunks).to.equal(4);
    const copied = await snapshot('rpl_snapshot_chunks');
    expect(copied).to.deep.equal([...matching].sort());
    expect(copied).to.not.include(late.eventId);
  });

  it('a chunk as large as what is left is the last one', async () => {
    const filter = { sourceId, to: Date.now() - 30_000 };
    const { matched, newest } = await matchingBound(h.relay.store.sql, orgId, filter);
    expect(matched).to.equal(11);
    expect(await copyInChunks('rpl_snapshot_whole', filter, newest!, 11)).to.equal(1);
    expect(await snapshot('rpl_snapshot_whole')).to.deep.equal([...matching].sort());
  });
});
