import Database from 'better-sqlite3';
import { expect } from 'chai';
import path from 'node:path';
import { describeEachStore, STORE_TARGETS } from '../testing/store-targets.js';
import type { LedgerKey } from './dedup-ledger.js';
import { openDedupJournal, openDedupJournalFile, type DedupJournal } from './dedup-journal.js';
import type { SqlClient } from './sql-client.js';
import { openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';

const MINUTE = 60_000;
const NOW = Date.UTC(2025, 0, 15, 12);
const key = (name: string, windowMs = 5 * MINUTE): LedgerKey => ({ key: name, windowMs });

// The contract both ledgers share is in dedup-ledger.spec.ts; these are the journal's own ways.
describeEachStore('DedupJournal beyond the shared contract', (target) => {
  let fixture: StoreFixture;
  let sourceId: string;
  const opened: DedupJournal[] = [];
  const open = async (sql: SqlClient = fixture.store.sql, options: Parameters<typeof openDedupJournal>[1] = {}) => {
    const journal = await openDedupJournal(sql, { now: () => NOW, ...options });
    opened.push(journal);
    return journal;
  };

  before(async function () {
    fixture = await openStoreFixture(this, target);
  });

  beforeEach(async () => {
    sourceId = (await fixture.createSource()).id;
  });

  afterEach(async () => {
    for (const journal of opened.splice(0)) await journal.close();
  });

  after(async () => {
    await fixture?.close();
  });

  it('when reopened, as after a restart, still answers the holders of live keys and lets expired ones go', async () => {
    const first = await open();
    expect(await first.claim(sourceId, [key('hash:a'), key('pid:1', 60 * MINUTE)], 'evt_1', NOW)).to.equal(null);
    expect(await first.claim(sourceId, [key('hash:short', MINUTE)], 'evt_2', NOW - MINUTE)).to.equal(null);
    const second = await open();
    expect(await second.claim(sourceId, [key('pid:1', 60 * MINUTE)], 'evt_3', NOW + MINUTE)).to.equal('evt_1');
    expect(await second.claim(sourceId, [key('hash:short', MINUTE)], 'evt_4', NOW)).to.equal(null);
    expect(await second.claim(sourceId, [key('hash:next')], 'evt_5', NOW)).to.equal(null);
  });

  it('when two keys share a fingerprint, neither is taken for a duplicate of the other', async () => {
    const journal = await open(fixture.store.sql, { fingerprint: () => 7 });
    expect(await journal.claim(sourceId, [key('hash:a')], 'evt_1', NOW)).to.equal(null);
    expect(await journal.claim(sourceId, [key('hash:b')], 'evt_2', NOW)).to.equal(null);
    expect(await journal.claim(sourceId, [key('hash:a')], 'evt_3', NOW)).to.equal('evt_1');
    expect(await journal.claim(sourceId, [key('hash:b')], 'evt_4', NOW)).to.equal('evt_2');
    await journal.release(sourceId, [key('hash:a')], 'evt_1');
    expect(await journal.claim(sourceId, [key('hash:b')], 'evt_5', NOW)).to.equal('evt_2');
    expect(await journal.claim(sourceId, [key('hash:a')], 'evt_6', NOW)).to.equal(null);
  });

  it('when the append fails, the claim fails and leaves its keys free for the next one', async () => {
    let failing = true;
    const flaky: SqlClient = {
      ...fixture.store.sql,
      transaction: (work) => (failing ? Promise.reject(new Error('disk full')) : fixture.store.sql.transaction(work)),
    };
    const journal = await open(flaky);
    const claims = [journal.claim(sourceId, [key('hash:a')], 'evt_1', NOW), journal.claim(sourceId, [key('hash:a')], 'evt_2', NOW)];
    const [first, second] = await Promise.allSettled(claims);
    expect(first.status).to.equal('rejected');
    // The second waited for the first's commit, then tried on its own: the store was still failing.
    expect(second.status).to.equal('rejected');
    failing = false;
    expect(await journal.claim(sourceId, [key('hash:a')], 'evt_3', NOW)).to.equal(null);
    expect(await journal.claim(sourceId, [key('hash:a')], 'evt_4', NOW)).to.equal('evt_3');
  });

  it('forgets purged keys in memory as well as in the table', async () => {
    const journal = await open();
    await journal.purgeExpired(NOW + MINUTE);
    const before = journal.indexedKeys();
    await journal.claim(sourceId, [key('hash:a', MINUTE), key('pid:1', 60 * MINUTE)], 'evt_1', NOW);
    expect(journal.indexedKeys()).to.equal(before + 2);
    await journal.purgeExpired(NOW + MINUTE);
    expect(journal.indexedKeys()).to.equal(before + 1);
    expect(await journal.claim(sourceId, [key('pid:1', 60 * MINUTE)], 'evt_2', NOW + MINUTE)).to.equal('evt_1');
  });
});

// The embedded default's journal: a SQLite file of its own beside the store's.
describe('DedupJournal in its own file', () => {
  let fixture: StoreFixture;
  let sourceId: string;
  let journal: DedupJournal | undefined;
  const openFile = async () => (journal = await openDedupJournalFile({ dataDir: fixture.dataDir, store: fixture.store.sql, now: () => NOW }));

  beforeEach(async function () {
    fixture = await openStoreFixture(this, STORE_TARGETS.find((target) => target.name === 'sqlite')!);
    sourceId = (await fixture.createSource()).id;
  });

  afterEach(async () => {
    await journal?.close();
    journal = undefined;
    await fixture.close();
  });

  it('commits a claim while another connection holds the store write lock', async function () {
    // Before, it waited for the lock: up to the SQL client's busy timeout of 10 s, and then failed.
    this.timeout(5_000);
    await openFile();
    const pipeline = new Database(path.join(fixture.dataDir, 'relay.sqlite'));
    pipeline.exec('BEGIN IMMEDIATE');
    try {
      expect(await journal!.claim(sourceId, [key('hash:a')], 'evt_1', NOW)).to.equal(null);
    } finally {
      pipeline.exec('ROLLBACK');
      pipeline.close();
    }
    expect(await journal!.claim(sourceId, [key('hash:a')], 'evt_2', NOW)).to.equal('evt_1');
  });

  it('takes over the live keys the store journal held before, and leaves the expired ones behind', async () => {
    // Claimed by a journal in the store, as the relay wrote it before the journal had a file.
    const inStore = await openDedupJournal(fixture.store.sql, { now: () => NOW });
    await inStore.claim(sourceId, [key('hash:live')], 'evt_live', NOW - MINUTE);
    await inStore.claim(sourceId, [key('hash:expired', MINUTE)], 'evt_expired', NOW - 2 * MINUTE);
    await inStore.close();
    await openFile();
    expect(await fixture.store.sql.all('SELECT id FROM dedup_journal')).to.deep.equal([]);
    expect(await journal!.claim(sourceId, [key('hash:live')], 'evt_1', NOW)).to.equal('evt_live');
    expect(await journal!.claim(sourceId, [key('hash:expired')], 'evt_2', NOW)).to.equal(null);
    expect(await journal!.claim(sourceId, [key('hash:new')], 'evt_3', NOW)).to.equal(null);
  });
});
