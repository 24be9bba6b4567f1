import { expect } from 'chai';
import type { QueryRunner } from 'typeorm';
import { newId } from '../ids/ids.js';
import { describeEachStore } from '../testing/store-targets.js';
import { indexAllPending, indexSearchBatch, rarePart, resetSearchIndex, searchIndexLag, searchMatches, searchBatchSize, trigramQuery } from './search-index.js';
import type { SqlClient } from './sql-client.js';
import { SearchIndexDetailNone1795305600018 } from './migrations/0019-search-index-detail-none.js';
import { SearchChunks1795305600020 } from './migrations/0021-search-chunks.js';
import { SqliteSearchChunks1795305600021 } from './migrations/0022-sqlite-search-chunks.js';
import { eventsInSearchIndex, insertEventRow, loseSearchIndex, openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';

describeEachStore('Search index, kept behind the insert', (target) => {
  let fixture: StoreFixture;
  let sql: SqlClient;
  let sourceId: string;

  beforeEach(async function () {
    fixture = await openStoreFixture(this, target);
    sql = fixture.store.sql;
    sourceId = (await fixture.createSource()).id;
  });

  afterEach(async () => {
    await fixture?.close();
  });

  const storeEvent = (text: string | null, orgId = fixture.org.id, source = sourceId) => insertEventRow(sql, orgId, source, text);

  /** The organization's events a search for `term` finds: through the index and its unindexed tail. */
  async function found(term: string, orgId = fixture.org.id, part = term): Promise<string[]> {
    const matches = searchMatches(sql, orgId, term, part)!;
    const rows = await sql.all<{ id: string }>(`SELECT e.id FROM events e WHERE e.org_id = ? AND ${matches.column} IN (${matches.query}) ORDER BY e.id`, [
      orgId,
      ...matches.params,
    ]);
    return rows.map((row) => row.id);
  }

  const inIndex = (term: string) => eventsInSearchIndex(sql, term);

  /** The indexed chunks whose text still holds `term` (SQLite: each of its trigrams), whichever events they name. */
  const chunksHolding = async (term: string) =>
    Number(
      (sql.kind === 'postgres'
        ? await sql.all<{ n: string }>('SELECT COUNT(*) AS n FROM search_chunks WHERE payload_text ILIKE ?', [`%${term}%`])
        : await sql.all<{ n: number }>('SELECT COUNT(*) AS n FROM events_search WHERE events_search MATCH ?', [trigramQuery(term)]))[0]!.n,
    );
  const chunkCount = async () => (await sql.all('SELECT 1 FROM search_chunks')).length;

  /** Runs migration steps on a query runner of the store's, released after. */
  async function withRunner(steps: (runner: QueryRunner) => Promise<void>): Promise<void> {
    const runner = fixture.store.dataSource.createQueryRunner();
    try {
      await steps(runner);
    } finally {
      await runner.release();
    }
  }

  it('stores an event without indexing it; the next batch indexes it', async () => {
    const id = await storeEvent('{"customer":"alice@example.com"}');
    expect(await inIndex('alice@example')).to.deep.equal([]);
    expect(await searchIndexLag(sql)).to.equal(1);
    expect(await indexSearchBatch(sql)).to.equal(1);
    expect(await inIndex('alice@example')).to.deep.equal([id]);
    expect(await searchIndexLag(sql)).to.equal(0);
    expect(await indexSearchBatch(sql)).to.equal(0);
  });

  it('finds indexed and not yet indexed events alike, case-insensitively, only in the organization', async () => {
    const indexed = await storeEvent('{"note":"Blue Parcel"}');
    await indexAllPending(sql);
    const tail = await storeEvent('{"note":"blue PARCEL too"}');
    const otherOrg = await fixture.store.organizations.create(`other-${newId('org').slice(-6)}`, 'pro');
    const otherSource = await fixture.store.sources.insert({ ...(await fixture.store.sources.findOneBy(fixture.org.id, { id: sourceId }))!, id: newId('src'), orgId: otherOrg.id, slug: 'other' });
    await storeEvent('{"note":"blue parcel elsewhere"}', otherOrg.id, otherSource.id);
    expect(await found('blue parcel')).to.deep.equal([indexed, tail].sort());
    expect(await found('nothing like it')).to.deep.equal([]);
  });

  it('folds the case of every alphabet, in the index and in the unindexed tail', async () => {
    const indexed = await storeEvent('{"fruit":"ÄPFEL und Birnen"}');
    await indexAllPending(sql);
    const tail = await storeEvent('{"fruit":"Äpfel"}');
    expect(await found('äpfel')).to.deep.equal([indexed, tail].sort());
    expect(await found('ÄPF')).to.deep.equal([indexed, tail].sort());
  });

  it('leaves out an event that holds every trigram of the term but not the term', async () => {
    const holder = await storeEvent('{"code":"abcd"}');
    const scattered = await storeEvent('{"codes":["abc","bcd"]}');
    await indexAllPending(sql);
    // One chunk holds both texts, and every trigram of the term.
    expect(await chunksHolding('abc')).to.equal(1);
    expect(await chunksHolding('bcd')).to.equal(1);
    expect(await inIndex('abcd')).to.deep.equal([holder]);
    expect(await found('abcd')).to.deep.equal([holder]);
    expect(await found('bcd')).to.deep.equal([holder, scattered].sort());
  });

  describe('a long term made of common trigrams', () => {
    const email = (n: number) => `{"customer":{"email":"customer-${String(n).padStart(5, '0')}@example.com"}}`;

    it('is looked up by its rare part, and each event found is checked for the whole term', async () => {
      for (let n = 10_000; n < 10_200; n++) await storeEvent(email(n));
      const wanted = [await storeEvent(email(4242)), await storeEvent(email(4242))];
      // Holds the rare part but not the whole term: the check leaves it out.
      await storeEvent('{"customer":{"email":"buyer-04242@elsewhere.org"}}');
      await indexAllPending(sql);
      const tailEvent = await storeEvent(email(4242));
      const part = await rarePart(sql, fixture.org.id, 'customer-04242@example.com');
      expect(part).to.equal('r-04242@');
      expect(await found('customer-04242@example.com', fixture.org.id, part)).to.deep.equal([...wanted, tailEvent].sort());
      expect(await found('customer-04242@example.com')).to.deep.equal([...wanted, tailEvent].sort());
    });

    it('is looked up whole when no part of it is rare, when all of it is, or when it is not plain ASCII', async () => {
      for (let n = 10_000; n < 10_040; n++) await storeEvent(email(n));
      expect(await rarePart(sql, fixture.org.id, 'example.com"}}')).to.equal('example.com"}}');
      expect(await rarePart(sql, fixture.org.id, 'zebra-quokka')).to.equal('zebra-quokka');
      expect(await rarePart(sql, fixture.org.id, 'customer-1ü')).to.equal('customer-1ü');
    });
  });

  it('indexes a backlog in batches, oldest first, until nothing is left', async () => {
    const batch = searchBatchSize(sql);
    const count = batch * 2 + 5;
    for (let i = 0; i < count; i++) await storeEvent(`{"order":"ord-${i}","kind":"backlog"}`);
    const batches: number[] = [];
    expect(await indexAllPending(sql, { afterBatch: async (indexed) => void batches.push(indexed) })).to.equal(count);
    expect(batches).to.deep.equal([batch, batch * 2, count]);
    expect(await inIndex('backlog')).to.have.length(count);
    expect(await searchIndexLag(sql)).to.equal(0);
  });

  it('stops between batches when told to, leaving the rest for the next pass', async () => {
    const batch = searchBatchSize(sql);
    for (let i = 0; i < batch + 1; i++) await storeEvent('{"kind":"stopping"}');
    let stop = false;
    expect(await indexAllPending(sql, { afterBatch: async () => void (stop = true), shouldStop: () => stop })).to.equal(batch);
    expect(await searchIndexLag(sql)).to.equal(1);
  });

  it('forgets a deleted event, indexed or not', async () => {
    const indexed = await storeEvent('{"kind":"doomed"}');
    await indexAllPending(sql);
    const tail = await storeEvent('{"kind":"doomed"}');
    await sql.run('DELETE FROM events WHERE id IN (?, ?)', [indexed, tail]);
    expect(await found('doomed')).to.deep.equal([]);
    expect(await searchIndexLag(sql)).to.equal(0);
    expect(await indexAllPending(sql)).to.equal(0);
    expect(await inIndex('doomed')).to.deep.equal([]);
    expect(await chunksHolding('doomed'), 'no text outlives its event').to.equal(0);
    expect(await chunkCount()).to.equal(0);
  });

  it('drops a chunk when every event of it is deleted, with nothing to index again', async () => {
    for (let i = 0; i < 3; i++) await storeEvent(`{"kind":"retained","n":${i}}`);
    await indexAllPending(sql);
    expect(await chunkCount()).to.equal(1);
    await sql.run('DELETE FROM events');
    expect(await chunkCount()).to.equal(0);
    expect(await chunksHolding('retained')).to.equal(0);
    expect(await searchIndexLag(sql)).to.equal(0);
    expect(await indexAllPending(sql)).to.equal(0);
  });

  it('indexes the other events of a chunk again when one of them is deleted or expires', async () => {
    const [deleted, expired, kept] = [
      await storeEvent('{"kind":"chunked","n":"one"}'),
      await storeEvent('{"kind":"chunked","n":"two"}'),
      await storeEvent('{"kind":"chunked","n":"three"}'),
    ];
    await indexAllPending(sql);
    expect(await chunkCount()).to.equal(1);
    await sql.run('DELETE FROM events WHERE id = ?', [deleted]);
    // PostgreSQL queues the two left again; SQLite marks their chunk stale, which still finds them.
    expect(await searchIndexLag(sql), 'the two left').to.equal(sql.kind === 'postgres' ? 2 : 0);
    expect(await inIndex('chunked')).to.deep.equal(sql.kind === 'postgres' ? [] : [expired, kept].sort());
    // PostgreSQL indexes the two events again, SQLite their chunk.
    expect(await indexAllPending(sql)).to.equal(sql.kind === 'postgres' ? 2 : 1);
    await sql.run('UPDATE events SET payload_text = NULL WHERE id = ?', [expired]);
    expect(await searchIndexLag(sql)).to.equal(sql.kind === 'postgres' ? 1 : 0);
    expect(await found('chunked')).to.deep.equal([kept]);
    await indexAllPending(sql);
    expect(await chunkCount()).to.equal(1);
    expect(await inIndex('chunked')).to.deep.equal([kept]);
    expect(await chunksHolding('one'), 'the deleted text is gone').to.equal(0);
    expect(await chunksHolding('two'), 'the expired text is gone').to.equal(0);
  });

  if (target.name === 'postgres') it("holds each word of a chunk's texts once, without their punctuation", async () => {
    await storeEvent('{"action":"opened","repo":"acme/widgets"}');
    await storeEvent('{"action":"closed","repo":"acme/widgets"}');
    await indexAllPending(sql);
    expect(await sql.all('SELECT payload_text FROM search_chunks')).to.deep.equal([{ payload_text: 'action opened repo acme widgets closed' }]);
  });

  it('finds a term across punctuation, or of punctuation alone, in an indexed event', async () => {
    const opened = await storeEvent('{"action":"opened","repo":"acme/widgets"}');
    const closed = await storeEvent('{"action":"closed","repo":"acme/widgets"}');
    await indexAllPending(sql);
    expect(await found('"action":"OPENED"')).to.deep.equal([opened]);
    expect(await found('ion":"clo')).to.deep.equal([closed]);
    expect(await found('acme/widgets"}')).to.deep.equal([opened, closed].sort());
    expect(await found('","')).to.deep.equal([opened, closed].sort());
    expect(await found('opened","repo":"acme/widgets')).to.deep.equal([opened]);
    expect(await found('closed","repo":"acme/widgets"}x')).to.deep.equal([]);
  });

  it('indexes an event stored after the newest ones were deleted (SQLite reuses their rowid)', async () => {
    await storeEvent('{"kind":"kept"}');
    const newest = await storeEvent('{"kind":"removed"}');
    await indexAllPending(sql);
    await sql.run('DELETE FROM events WHERE id = ?', [newest]);
    const next = await storeEvent('{"kind":"arrived later"}');
    // PostgreSQL: the kept event shared the deleted one's chunk, so it is queued again beside the new one.
    expect(await searchIndexLag(sql)).to.equal(sql.kind === 'postgres' ? 2 : 1);
    await indexAllPending(sql);
    expect(await inIndex('arrived later')).to.deep.equal([next]);
    expect(await inIndex('removed')).to.deep.equal([]);
  });

  it('drops an expired payload from the index, and never indexes the old text of one expired before its turn', async () => {
    const indexed = await storeEvent('{"secret":"expiring-one"}');
    await indexAllPending(sql);
    const tail = await storeEvent('{"secret":"expiring-two"}');
    await sql.run('UPDATE events SET payload_text = NULL WHERE id IN (?, ?)', [indexed, tail]);
    await indexAllPending(sql);
    expect(await inIndex('expiring')).to.deep.equal([]);
    expect(await chunksHolding('expiring')).to.equal(0);
    expect(await chunkCount()).to.equal(0);
    expect(await found('expiring')).to.deep.equal([]);
    expect(await searchIndexLag(sql)).to.equal(0);
  });

  it('rebuilds the index from the stored events after it was lost', async () => {
    const ids = [await storeEvent('{"kind":"rebuilt"}'), await storeEvent('{"kind":"rebuilt"}'), await storeEvent(null)];
    await indexAllPending(sql);
    await loseSearchIndex(sql);
    expect(await inIndex('rebuilt')).to.deep.equal([]);
    await resetSearchIndex(sql);
    // SQLite walks every event, PostgreSQL queues only those with a text.
    expect(await searchIndexLag(sql)).to.equal(sql.kind === 'postgres' ? 2 : 3);
    expect(await found('rebuilt'), 'found meanwhile, as the unindexed tail').to.deep.equal(ids.slice(0, 2).sort());
    await indexAllPending(sql);
    expect(await inIndex('rebuilt')).to.deep.equal(ids.slice(0, 2).sort());
    expect(await searchIndexLag(sql)).to.equal(0);
  });

  if (target.name === 'postgres') describe('migration 0021: chunks of events', () => {
    it('queues the events of the index of a row each again, found meanwhile, and indexes them in chunks', async () => {
      const ids = [await storeEvent('{"kind":"rechunked"}'), await storeEvent('{"kind":"rechunked"}')];
      const migration = new SearchChunks1795305600020();
      await withRunner(async (runner) => {
        await migration.down(runner);
        await sql.run('DELETE FROM search_pending');
        await sql.run('INSERT INTO events_search (event_id, org_id, payload_text) SELECT id, org_id, payload_text FROM events');
        await migration.up(runner);
      });
      expect(await searchIndexLag(sql)).to.equal(2);
      expect(await found('rechunked'), 'found meanwhile, as the unindexed tail').to.deep.equal(ids.sort());
      await indexAllPending(sql);
      expect(await inIndex('rechunked')).to.deep.equal(ids.sort());
      expect(await sql.all('SELECT id FROM search_chunks')).to.have.length(1);
    });
  });

  // FTS5's layout; PostgreSQL's trigram index has no such setting.
  if (target.name === 'sqlite') describe('migration 0019: trigrams without their positions', () => {
    const layout = async () => (await sql.all<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'events_search'"))[0]!.sql;

    /** The store as it was before the migration (its index in the former layout, every event indexed), then migrated. */
    async function migrateFromFormerLayout(): Promise<void> {
      const [detailNone, chunks] = [new SearchIndexDetailNone1795305600018(), new SqliteSearchChunks1795305600021()];
      await withRunner(async (runner) => {
        await chunks.down(runner);
        await detailNone.down(runner);
        await indexEachEvent();
        await detailNone.up(runner);
        await chunks.up(runner);
      });
    }

    it('rebuilds a small index in the new layout behind it, searches complete meanwhile', async () => {
      const ids = [await storeEvent('{"kind":"migrated"}'), await storeEvent('{"kind":"migrated"}')];
      await migrateFromFormerLayout();
      expect(await layout()).to.contain('detail=none');
      expect(await searchIndexLag(sql)).to.equal(2);
      expect(await found('migrated'), 'found meanwhile, as the unindexed tail').to.deep.equal(ids.sort());
      await indexAllPending(sql);
      expect(await inIndex('migrated')).to.deep.equal(ids.sort());
    });

    it('leaves a large index in its layout, searched alike, until a rebuild recreates it', async function () {
      this.timeout(30_000);
      const ids = [await storeEvent('{"kind":"kept as it was"}'), await storeEvent('{"kind":"kept as it was"}')];
      // Past the 50,000 events the migration rebuilds itself: the API's searches would scan them all meanwhile.
      await sql.run(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
         INSERT INTO events (id, org_id, source_id, status, headers, payload_text, payload_size, payload_hash, signature_valid,
           received_at, validated_at, queued_at, created_at, deliveries_count, deliveries_succeeded, deliveries_failed)
         SELECT 'evt_bulk' || i, ?, ?, 'delivered', '{}', '{"n":' || i || '}', 10, 'sha256:x', 1, 0, 0, 0, 0, 0, 0, 0 FROM n`,
        [fixture.org.id, sourceId],
      );
      await migrateFromFormerLayout();
      expect(await layout()).not.to.contain('detail=none');
      expect(await searchIndexLag(sql)).to.equal(0);
      expect(await found('kept as it was')).to.deep.equal(ids.sort());
      await resetSearchIndex(sql);
      expect(await layout()).to.contain('detail=none');
      expect(await searchIndexLag(sql)).to.equal(50_002);
    });
  });

  if (target.name === 'sqlite') describe('migration 0022: chunks of events', () => {
    it('takes the index of a row an event as chunks of one, searched alike, without indexing again', async () => {
      const ids = [await storeEvent('{"kind":"kept whole"}'), await storeEvent('{"kind":"kept whole"}')];
      const migration = new SqliteSearchChunks1795305600021();
      await withRunner(async (runner) => {
        await migration.down(runner);
        await indexEachEvent();
        await migration.up(runner);
      });
      expect(await searchIndexLag(sql)).to.equal(0);
      expect(await chunkCount()).to.equal(2);
      expect(await inIndex('kept whole')).to.deep.equal(ids.sort());
      await sql.run('DELETE FROM events WHERE id = ?', [ids[0]]);
      expect(await chunkCount()).to.equal(1);
      const later = await storeEvent('{"kind":"kept whole"}');
      await indexAllPending(sql);
      expect(await found('kept whole')).to.deep.equal([ids[1]!, later].sort());
    });
  });

  /** SQLite, before migration 0022: every event indexed in a row of its own, as the indexer did. */
  async function indexEachEvent(): Promise<void> {
    await sql.run('INSERT INTO events_search (rowid, payload_text) SELECT rowid, payload_text FROM events WHERE payload_text IS NOT NULL');
    await sql.run('UPDATE search_index_state SET indexed_through = (SELECT COALESCE(MAX(rowid), 0) FROM events)');
  }

  // FTS5's setting; PostgreSQL's trigram index has no such knob.
  if (target.name === 'sqlite') it('merges its segments 16 at a time, the setting kept across a rebuild', async () => {
    const automerge = async () => (await sql.all<{ v: number }>("SELECT v FROM events_search_config WHERE k = 'automerge'"))[0]?.v;
    expect(await automerge()).to.equal(16);
    await resetSearchIndex(sql);
    expect(await automerge()).to.equal(16);
  });
});
