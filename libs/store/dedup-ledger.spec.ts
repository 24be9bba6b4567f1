import { expect } from 'chai';
import { describeEachStore } from '../testing/store-targets.js';
import { DELETE_CHUNK_ROWS } from './delete-in-chunks.js';
import { createDedupLedger, type DedupLedger, type LedgerKey } from './dedup-ledger.js';
import { openDedupJournal } from './dedup-journal.js';
import type { SqlClient } from './sql-client.js';
import { openStoreFixture, type StoreFixture } from '../testing/store-fixtures.js';

const MINUTE = 60_000;
const NOW = Date.UTC(2025, 0, 15, 12);
const key = (name: string, windowMs = 5 * MINUTE): LedgerKey => ({ key: name, windowMs });

/** Both ledgers keep one contract: the key-indexed table, and the journal of the embedded mode's one gateway. */
const LEDGERS = [
  { name: 'DedupLedger', table: 'dedup_keys', open: async (sql: SqlClient): Promise<DedupLedger & { close?(): Promise<void> }> => createDedupLedger(sql) },
  { name: 'DedupJournal', table: 'dedup_journal', open: (sql: SqlClient) => openDedupJournal(sql) },
];

for (const { name, table, open } of LEDGERS) describeEachStore(name, (target) => {
  let fixture: StoreFixture;
  let ledger: DedupLedger & { close?(): Promise<void> };
  let sourceId: string;

  before(async function () {
    fixture = await openStoreFixture(this, target);
    ledger = await open(fixture.store.sql);
  });

  beforeEach(async () => {
    sourceId = (await fixture.createSource()).id;
  });

  after(async () => {
    await ledger?.close?.();
    await fixture?.close();
  });

  it('claims new keys (null) and answers the holder for a live key', async () => {
    expect(await ledger.claim(sourceId, [key('hash:a')], 'evt_1', NOW)).to.equal(null);
    expect(await ledger.claim(sourceId, [key('hash:a')], 'evt_2', NOW + MINUTE)).to.equal('evt_1');
  });

  it('keeps a key with quotes, commas, braces and backslashes as it is, apart from its near neighbours', async () => {
    const odd = 'idem:{"a","b"},\\ \'x\' NULL';
    expect(await ledger.claim(sourceId, [key(odd), key('hash:odd')], 'evt_1', NOW)).to.equal(null);
    expect(await ledger.claim(sourceId, [key(odd)], 'evt_2', NOW)).to.equal('evt_1');
    expect(await ledger.claim(sourceId, [key('idem:{"a","b"}')], 'evt_3', NOW)).to.equal(null);
    const [row] = await fixture.store.sql.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE dedup_key = ?`, [odd]);
    expect(Number(row!.n)).to.equal(1);
  });

  it('scopes keys to their source', async () => {
    const other = (await fixture.createSource()).id;
    expect(await ledger.claim(sourceId, [key('hash:a')], 'evt_1', NOW)).to.equal(null);
    expect(await ledger.claim(other, [key('hash:a')], 'evt_2', NOW)).to.equal(null);
  });

  it('takes over a key once its window has passed', async () => {
    expect(await ledger.claim(sourceId, [key('hash:a', MINUTE)], 'evt_1', NOW)).to.equal(null);
    expect(await ledger.claim(sourceId, [key('hash:a', MINUTE)], 'evt_2', NOW + MINUTE - 1)).to.equal('evt_1');
    expect(await ledger.claim(sourceId, [key('hash:a', MINUTE)], 'evt_3', NOW + MINUTE)).to.equal(null);
    expect(await ledger.claim(sourceId, [key('hash:a', MINUTE)], 'evt_4', NOW + MINUTE)).to.equal('evt_3');
  });

  it('is all or nothing: a claim stopped by one held key leaves its other keys unclaimed', async () => {
    expect(await ledger.claim(sourceId, [key('hash:a'), key('pid:1')], 'evt_1', NOW)).to.equal(null);
    expect(await ledger.claim(sourceId, [key('hash:b'), key('pid:1')], 'evt_2', NOW)).to.equal('evt_1');
    expect(await ledger.claim(sourceId, [key('hash:b')], 'evt_3', NOW)).to.equal(null);
  });

  it('keeps concurrent overlapping claims all or nothing: a granted claim holds all its keys, a refused one none', async () => {
    const claims = [
      { eventId: 'evt_1', keys: [key('hash:a'), key('pid:1')] },
      { eventId: 'evt_2', keys: [key('hash:b'), key('pid:1')] },
      { eventId: 'evt_3', keys: [key('hash:b'), key('pid:2')] },
      { eventId: 'evt_4', keys: [key('hash:a')] },
      { eventId: 'evt_5', keys: [key('hash:c'), key('pid:2')] },
    ];
    const holders = await Promise.all(claims.map((claim) => ledger.claim(sourceId, claim.keys, claim.eventId, NOW)));
    const rows = await fixture.store.sql.all<{ dedup_key: string; event_id: string }>(`SELECT dedup_key, event_id FROM ${table} WHERE source_id = ?`, [sourceId]);
    const heldBy = new Map(rows.map((row) => [row.dedup_key, row.event_id]));
    claims.forEach((claim, index) => {
      const holder = holders[index];
      if (holder === null) {
        for (const { key: name } of claim.keys) expect(heldBy.get(name), `${claim.eventId} holds ${name}`).to.equal(claim.eventId);
      } else {
        expect([...heldBy.values()], `${claim.eventId} holds nothing`).not.to.include(claim.eventId);
        expect(claim.keys.some(({ key: name }) => heldBy.get(name) === holder), `${holder} holds a key of ${claim.eventId}`).to.equal(true);
      }
    });
    // hash:a and pid:1 go to the same one claim; so do hash:b and one of pid:1 or pid:2.
    expect(holders.filter((holder) => holder === null).length).to.be.within(2, 3);
  });

  it('of 50 concurrent identical claims, grants exactly one and answers its id to the 49 others', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => ledger.claim(sourceId, [key('hash:x'), key('pid:x')], `evt_${i}`, NOW)));
    const granted = results.flatMap((holder, i) => (holder === null ? [`evt_${i}`] : []));
    expect(granted).to.have.length(1);
    expect(results.filter((holder) => holder === granted[0])).to.have.length(49);
  });

  it('release frees the keys of that event only', async () => {
    expect(await ledger.claim(sourceId, [key('hash:a'), key('pid:1')], 'evt_1', NOW)).to.equal(null);
    await ledger.release(sourceId, [key('hash:a'), key('pid:1')], 'evt_other');
    expect(await ledger.claim(sourceId, [key('hash:a')], 'evt_2', NOW)).to.equal('evt_1');
    await ledger.release(sourceId, [key('hash:a'), key('pid:1')], 'evt_1');
    expect(await ledger.claim(sourceId, [key('hash:a'), key('pid:1')], 'evt_3', NOW)).to.equal(null);
  });

  it('purgeExpired deletes every expired key, beyond one statement\'s chunk, and keeps the live ones', async () => {
    await ledger.purgeExpired(Number.MAX_SAFE_INTEGER);
    const expired = Array.from({ length: DELETE_CHUNK_ROWS + 5 }, (_, i) => key(`hash:${i}`, MINUTE));
    await ledger.claim(sourceId, [...expired, key('pid:long', 60 * MINUTE)], 'evt_1', NOW);
    expect(await ledger.purgeExpired(NOW + MINUTE)).to.equal(DELETE_CHUNK_ROWS + 5);
    const rows = await fixture.store.sql.all<{ dedup_key: string }>(`SELECT dedup_key FROM ${table} WHERE source_id = ?`, [sourceId]);
    expect(rows.map((row) => row.dedup_key)).to.deep.equal(['pid:long']);
  });
});

describeEachStore('DedupLedger of several gateways', (target) => {
  let fixture: StoreFixture;

  before(async function () {
    fixture = await openStoreFixture(this, target);
  });

  after(async () => {
    await fixture?.close();
  });

  it('settles claims made together that cross over the same keys in opposite orders, each all or nothing', async () => {
    const sourceId = (await fixture.createSource()).id;
    if (target.name === 'postgres') {
      // A slow disk, in effect: each key takes 20 ms to write, so the two gateways' calls overlap key by key.
      await fixture.store.sql.run(`CREATE FUNCTION slow_dedup_key() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.02); RETURN NEW; END $$`);
      await fixture.store.sql.run('CREATE TRIGGER slow_dedup_key BEFORE INSERT ON dedup_keys FOR EACH ROW EXECUTE FUNCTION slow_dedup_key()');
    }
    const [first, second] = [createDedupLedger(fixture.store.sql), createDedupLedger(fixture.store.sql)];
    for (let round = 0; round < 10; round += 1) {
      const named = (name: string) => key(`${name}:${round}`);
      // The first gateway's call takes a, z, then m; the second's m, then z: without one lock order they could wait on each other.
      const claims = [
        { ledger: first, keys: [named('a'), named('z')], eventId: `evt_az_${round}` },
        { ledger: first, keys: [named('m')], eventId: `evt_m1_${round}` },
        { ledger: second, keys: [named('m')], eventId: `evt_m2_${round}` },
        { ledger: second, keys: [named('z')], eventId: `evt_z_${round}` },
      ];
      const holders = await Promise.all(claims.map(({ ledger, keys, eventId }) => ledger.claim(sourceId, keys, eventId, NOW)));
      const granted = claims.filter((_, index) => holders[index] === null).map(({ eventId }) => eventId);
      expect(granted.filter((eventId) => eventId.startsWith('evt_m')), 'one claim of m').to.have.length(1);
      expect(granted.filter((eventId) => eventId.startsWith('evt_az') || eventId.startsWith('evt_z')), 'one claim of z').to.have.length(1);
      const rows = await fixture.store.sql.all<{ dedup_key: string; event_id: string }>('SELECT dedup_key, event_id FROM dedup_keys WHERE source_id = ? AND dedup_key LIKE ?', [
        sourceId,
        `%:${round}`,
      ]);
      const heldBy = new Map(rows.map((row) => [row.dedup_key, row.event_id]));
      for (const { keys, eventId } of claims.filter(({ eventId }) => granted.includes(eventId))) {
        for (const { key: name } of keys) expect(heldBy.get(name), `${eventId} holds ${name}`).to.equal(eventId);
      }
      expect(heldBy.has(`a:${round}`), 'a, with z or not at all').to.equal(granted.includes(`evt_az_${round}`));
    }
  });
});
