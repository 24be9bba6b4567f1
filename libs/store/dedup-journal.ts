import type { DedupLedger, LedgerKey } from './dedup-ledger.js';
import { deleteInChunks } from './delete-in-chunks.js';
import { openSqlClient, type SqlClient } from './sql-client.js';
import { tickBatcher } from '../concurrency/tick-batcher.js';

/**
 * The dedup ledger of the one gateway the embedded log allows: claims are decided in memory and made
 * durable as appends to `dedup_journal`, instead of inserts into an index ordered by key.
 *
 * Why: keys are random, so each insert into `dedup_keys` dirties a page of its own, and SQLite writes
 * every dirty page to the WAL at commit; profiles put that at two thirds of the gateway's store time.
 * Appending rows in id order touches a page or two per commit, however many claims it carries.
 *
 * The index held in memory maps a fingerprint of (source, key) to journal row ids, about 50 bytes a
 * live key; it is rebuilt from the journal at start. A fingerprint only nominates rows: a claim whose
 * fingerprint is known reads those rows and compares source, key and expiry, so a collision never turns
 * a new webhook into a duplicate. Only one process may write a journal: ids are assigned here.
 *
 * Its rows live in a SQLite file of their own (`openDedupJournalFile`), not in the store's: a claim is
 * acknowledged only once its append has committed, and in the store's file that commit waited for the
 * pipeline threads' write transactions (docs/decisions/0027-dedup-journal.md).
 */
export interface DedupJournal extends DedupLedger {
  /** Fingerprints held in memory: what the journal costs in memory, about 50 bytes each. */
  indexedKeys(): number;
  /** Stops the purge timer. */
  close(): Promise<void>;
}

export interface DedupJournalOptions {
  /** How often expired rows are purged (default one minute). */
  purgeIntervalMs?: number;
  now?: () => number;
  /** Hears of a failed purge; the next interval tries again. */
  onPurgeError?: (error: unknown) => void;
  /** Tests force collisions with a narrower fingerprint. */
  fingerprint?: (sourceId: string, key: string) => number;
}

interface JournalRow {
  id: number;
  fp: number;
  sourceId: string;
  key: string;
  eventId: string;
  expiresAt: number;
}

interface StoredRow {
  id: number;
  source_id: string;
  dedup_key: string;
  event_id: string;
  expires_at: number;
}

const LOAD_PAGE_ROWS = 50_000;
// Six parameters a row keeps a statement far below SQLite's and PostgreSQL's parameter limits.
const INSERT_ROWS = 500;

/**
 * A 30-bit fingerprint (cyrb53's mixing, cut to a small integer V8 keeps unboxed, which halves the index's
 * memory). It need not resist crafted collisions, nor be rare ones: a fingerprint only nominates rows,
 * and a known one costs a read of them, never a wrong answer. At ten million live keys, 1% of new keys pay that read.
 */
function journalFingerprint(sourceId: string, key: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  const text = `${sourceId}\n${key}`;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  return h1 & 0x3fffffff;
}

/** Ids per fingerprint: one almost always, so a bare number; an array only after a collision. */
class FingerprintIndex {
  private readonly ids = new Map<number, number | number[]>();

  get size(): number {
    return this.ids.size;
  }

  has(fp: number): boolean {
    return this.ids.has(fp);
  }

  idsOf(fp: number): number[] {
    const held = this.ids.get(fp);
    return held === undefined ? [] : typeof held === 'number' ? [held] : held;
  }

  add(fp: number, id: number): void {
    const held = this.ids.get(fp);
    this.ids.set(fp, held === undefined ? id : [...(typeof held === 'number' ? [held] : held), id]);
  }

  remove(fp: number, id: number): void {
    const left = this.idsOf(fp).filter((held) => held !== id);
    if (left.length === 0) this.ids.delete(fp);
    else this.ids.set(fp, left.length === 1 ? left[0]! : left);
  }
}

/** The journal's file in the data directory. */
export const DEDUP_JOURNAL_FILE = 'dedup.sqlite';

// The shape of the store's `dedup_journal` (migration 0006), which held the rows before this file did.
const JOURNAL_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS dedup_journal (id INTEGER PRIMARY KEY, fp BIGINT NOT NULL, source_id VARCHAR(40) NOT NULL,
     dedup_key VARCHAR(300) NOT NULL, event_id VARCHAR(40) NOT NULL, expires_at BIGINT NOT NULL)`,
  'CREATE INDEX IF NOT EXISTS ix_dedup_journal_expiry ON dedup_journal (expires_at)',
];
const JOURNAL_COLUMNS = 'id, fp, source_id, dedup_key, event_id, expires_at';

/** An insert of `count` rows, each given as its values in `JOURNAL_COLUMNS` order. */
const insertRows = (count: number, verb: 'INSERT' | 'INSERT OR IGNORE' = 'INSERT') =>
  `${verb} INTO dedup_journal (${JOURNAL_COLUMNS}) VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`;

export interface DedupJournalFileOptions extends DedupJournalOptions {
  dataDir: string;
  /** The store: rows its own `dedup_journal` still holds (written before the journal had a file) are moved here once. */
  store: SqlClient;
  /** Hears of failed background checkpoints of the file. */
  onBackgroundError?: (error: Error) => void;
}

/** Opens the journal in its own file (`DEDUP_JOURNAL_FILE`); the relay makes it private with the rest of the data directory. */
export async function openDedupJournalFile(options: DedupJournalFileOptions): Promise<DedupJournal> {
  const sql = openSqlClient({ dataDir: options.dataDir, sqliteFile: DEDUP_JOURNAL_FILE, onBackgroundError: options.onBackgroundError });
  try {
    for (const statement of JOURNAL_SCHEMA) await sql.run(statement);
    await moveStoreRows(options.store, sql, (options.now ?? Date.now)());
    const journal = await openDedupJournal(sql, options);
    return {
      ...journal,
      async close() {
        await journal.close();
        await sql.close();
      },
    };
  } catch (error) {
    await sql.close();
    throw error;
  }
}

/** Copies the live rows of the store's journal into the file, then deletes them there; a crash between the two copies them again, harmlessly. */
async function moveStoreRows(store: SqlClient, file: SqlClient, nowMs: number): Promise<void> {
  for (;;) {
    const rows = await store.all<StoredRow & { fp: number }>(`SELECT ${JOURNAL_COLUMNS} FROM dedup_journal ORDER BY id LIMIT ${INSERT_ROWS}`);
    if (rows.length === 0) return;
    const live = rows.filter((row) => Number(row.expires_at) > nowMs);
    if (live.length > 0) {
      await file.run(
        insertRows(live.length, 'INSERT OR IGNORE'),
        live.flatMap((row) => [row.id, row.fp, row.source_id, row.dedup_key, row.event_id, row.expires_at]),
      );
    }
    await store.run('DELETE FROM dedup_journal WHERE id <= ?', [rows[rows.length - 1]!.id]);
  }
}

export async function openDedupJournal(sql: SqlClient, options: DedupJournalOptions = {}): Promise<DedupJournal> {
  const fingerprint = options.fingerprint ?? journalFingerprint;
  const now = options.now ?? Date.now;
  const index = new FingerprintIndex();
  let lastId = 0;
  // The live rows, in pages so a large journal never sits in memory as one result.
  for (;;) {
    const page = await sql.all<{ id: number; fp: number }>(
      `SELECT id, fp FROM dedup_journal WHERE id > ? AND expires_at > ? ORDER BY id LIMIT ${LOAD_PAGE_ROWS}`,
      [lastId, now()],
    );
    for (const row of page) index.add(Number(row.fp), Number(row.id));
    if (page.length < LOAD_PAGE_ROWS) break;
    lastId = Number(page[page.length - 1]!.id);
  }
  const [{ max } = { max: 0 }] = await sql.all<{ max: number | null }>('SELECT MAX(id) AS max FROM dedup_journal');
  let nextId = Number(max ?? 0) + 1;

  /** Rows granted and not yet committed: a claim that meets one waits for its commit. */
  const uncommitted = new Map<number, Promise<void>>();
  /** Fingerprints whose rows a claim is reading: another claim of them waits, then decides afresh. */
  const reading = new Map<number, Promise<void>>();

  const append = tickBatcher(async (claims: JournalRow[][]) => {
    const rows = claims.flat();
    await sql.transaction(async (tx) => {
      for (let start = 0; start < rows.length; start += INSERT_ROWS) {
        const chunk = rows.slice(start, start + INSERT_ROWS);
        await tx.run(
          insertRows(chunk.length),
          chunk.flatMap((row) => [row.id, row.fp, row.sourceId, row.key, row.eventId, row.expiresAt]),
        );
      }
    });
    return claims.map(() => undefined);
  });

  async function grant(sourceId: string, keys: LedgerKey[], fps: number[], eventId: string, nowMs: number, replaced: Set<number>): Promise<null> {
    const rows = keys.map(({ key, windowMs }, i) => ({ id: nextId++, fp: fps[i]!, sourceId, key, eventId, expiresAt: nowMs + windowMs }));
    for (const row of rows) {
      for (const id of index.idsOf(row.fp)) if (replaced.has(id)) index.remove(row.fp, id);
      index.add(row.fp, row.id);
    }
    const committed = append(rows);
    const settled = committed.then(
      () => undefined,
      () => undefined,
    );
    for (const row of rows) uncommitted.set(row.id, settled);
    try {
      await committed;
      return null;
    } catch (error) {
      // Never durable, so never claimed; what it replaced had expired or was gone.
      for (const row of rows) index.remove(row.fp, row.id);
      throw error;
    } finally {
      for (const row of rows) uncommitted.delete(row.id);
    }
  }

  /** The holder of a live key among the nominated rows, or the ids that may be replaced. */
  async function readHolders(sourceId: string, keys: LedgerKey[], ids: number[], nowMs: number): Promise<{ holder: string | null; replaced: Set<number> }> {
    const rows = await sql.all<StoredRow>(`SELECT id, source_id, dedup_key, event_id, expires_at FROM dedup_journal WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    for (const { key } of keys) {
      const live = rows.find((row) => row.source_id === sourceId && row.dedup_key === key && Number(row.expires_at) > nowMs);
      if (live) return { holder: live.event_id, replaced: new Set() };
    }
    // Gone (purged, released) or the same key expired: replaced. Another key's row stays beside ours.
    const replaced = new Set(ids.filter((id) => {
      const row = byId.get(id);
      return !row || (row.source_id === sourceId && keys.some(({ key }) => key === row.dedup_key));
    }));
    return { holder: null, replaced };
  }

  const journal: DedupJournal = {
    async claim(sourceId, keys, eventId, nowMs) {
      if (keys.length === 0) return null;
      const fps = keys.map(({ key }) => fingerprint(sourceId, key));
      // Almost every claim is of keys never seen: decided without a read.
      if (!fps.some((fp) => index.has(fp) || reading.has(fp))) return grant(sourceId, keys, fps, eventId, nowMs, new Set());
      for (;;) {
        const busy = fps.map((fp) => reading.get(fp)).filter((p) => p !== undefined);
        const ids = [...new Set(fps.flatMap((fp) => index.idsOf(fp)))];
        const pending = ids.map((id) => uncommitted.get(id)).filter((p) => p !== undefined);
        if (busy.length + pending.length > 0) {
          await Promise.all([...busy, ...pending]);
          continue;
        }
        if (ids.length === 0) return grant(sourceId, keys, fps, eventId, nowMs, new Set());
        let done!: () => void;
        const read = new Promise<void>((resolve) => (done = resolve));
        for (const fp of fps) reading.set(fp, read);
        try {
          const { holder, replaced } = await readHolders(sourceId, keys, ids, nowMs);
          // Held until the grant has committed or failed: a claim waiting on these keys then decides afresh.
          return holder ?? (await grant(sourceId, keys, fps, eventId, nowMs, replaced));
        } finally {
          for (const fp of fps) if (reading.get(fp) === read) reading.delete(fp);
          done();
        }
      }
    },

    async release(sourceId, keys, eventId) {
      const fps = keys.map(({ key }) => fingerprint(sourceId, key));
      const ids = [...new Set(fps.flatMap((fp) => index.idsOf(fp)))];
      if (ids.length === 0) return;
      const released = await sql.all<{ id: number; fp: number }>(
        `DELETE FROM dedup_journal WHERE source_id = ? AND event_id = ? AND id IN (${ids.map(() => '?').join(', ')}) RETURNING id, fp`,
        [sourceId, eventId, ...ids],
      );
      for (const row of released) index.remove(Number(row.fp), Number(row.id));
    },

    purgeExpired: (nowMs) =>
      deleteInChunks(async (limit) => {
        const purged = await sql.all<{ id: number; fp: number }>(
          `DELETE FROM dedup_journal WHERE id IN (SELECT id FROM dedup_journal WHERE expires_at <= ? ORDER BY expires_at LIMIT ?) RETURNING id, fp`,
          [nowMs, limit],
        );
        for (const row of purged) index.remove(Number(row.fp), Number(row.id));
        return purged.length;
      }),

    indexedKeys: () => index.size,

    async close() {
      clearInterval(purgeTimer);
    },
  };

  const purgeTimer = setInterval(() => void journal.purgeExpired(now()).catch(options.onPurgeError ?? (() => undefined)), options.purgeIntervalMs ?? 60_000);
  purgeTimer.unref();
  return journal;
}
