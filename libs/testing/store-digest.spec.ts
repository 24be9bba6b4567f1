import { expect } from 'chai';
import { openStore, type Store } from '../store/store.js';
import { sourceRow } from './store-fixtures.js';
import { watchStore } from './store-digest.js';
import { describeEachStore } from './store-targets.js';

describeEachStore('watchStore', (target) => {
  let store: Store;
  let watch: ReturnType<typeof watchStore>;
  let cleanup: () => Promise<void>;
  let orgId: string;

  before(async function () {
    const location = await target.prepare(this);
    store = await openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
    watch = watchStore(store.sql, location.dataDir);
    orgId = (await store.organizations.create('watched', 'pro')).id;
    cleanup = async () => {
      watch.close();
      await store.close();
      await location.cleanup();
    };
  });

  after(async () => {
    await cleanup?.();
  });

  it('sees nothing when nothing was written, reads included', async () => {
    const before = await watch.snapshot();
    await store.sql.all('SELECT * FROM sources');
    expect((await watch.changesSince(before, Date.now())).change).to.equal(null);
  });

  it('sees a row added, changed and removed, by any connection', async () => {
    let snapshot = await watch.snapshot();
    const row = sourceRow(orgId);
    await store.sources.insert(row);
    ({ snapshot } = await expectChange(snapshot));
    await store.sql.run('UPDATE sources SET name = ? WHERE id = ?', ['Renamed', row.id]);
    ({ snapshot } = await expectChange(snapshot));
    await store.sources.delete(orgId, row.id);
    await expectChange(snapshot);
  });

  it('lets an expired dedup key vanish, but not appear, nor vanish before its expiry', async () => {
    const source = sourceRow(orgId);
    await store.sources.insert(source);
    const now = Date.now();
    const insertKey = (key: string, expiresAt: number) =>
      store.sql.run('INSERT INTO dedup_keys (source_id, dedup_key, event_id, expires_at) VALUES (?, ?, ?, ?)', [source.id, key, 'evt_x', expiresAt]);
    await insertKey('expired', now - 1000);
    await insertKey('live', now + 60_000);
    const snapshot = await watch.snapshot();
    await store.sql.run("DELETE FROM dedup_keys WHERE dedup_key = 'expired'");
    const purged = await watch.changesSince(snapshot, now);
    expect(purged.change).to.equal(null);
    await store.sql.run("DELETE FROM dedup_keys WHERE dedup_key = 'live'");
    expect((await watch.changesSince(purged.snapshot, now)).change).to.match(/vanished before its expiry/);
    await insertKey('new', now + 60_000);
    expect((await watch.changesSince(purged.snapshot, now)).change).to.match(/appeared/);
  });

  async function expectChange(since: Awaited<ReturnType<typeof watch.snapshot>>) {
    const result = await watch.changesSince(since, Date.now());
    expect(result.change).to.be.a('string');
    return result;
  }
});
