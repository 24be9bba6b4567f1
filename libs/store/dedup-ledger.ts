import type { SqlClient } from './sql-client.js';
import { deleteInChunks } from './delete-in-chunks.js';
import { storeBatcher } from './store-batcher.js';

export interface LedgerKey {
  key: string;
  windowMs: number;
}

/**
 * Dedup keys per source. `claim` checks and inserts every key in one atomic step: either all are
 * claimed for the new event (null), or the event id holding a live key is returned and nothing changes.
 * Claims made together share one transaction (one commit), each claim atomic within it and seeing the
 * earlier ones: on SQLite those of one event-loop turn, whose write transaction excludes every other
 * writer; on PostgreSQL those made while the previous call ran, and a concurrent claim of the same key
 * elsewhere waits until the first commits, then sees it.
 */
export interface DedupLedger {
  claim(sourceId: string, keys: LedgerKey[], eventId: string, nowMs: number): Promise<string | null>;
  /** Undoes a claim whose event could not be made durable, so the provider's retry is not a duplicate. */
  release(sourceId: string, keys: LedgerKey[], eventId: string): Promise<void>;
  /** Deletes every expired key, in bounded statements so ingest is never held up for long; returns how many. */
  purgeExpired(nowMs: number): Promise<number>;
}

interface Claim {
  sourceId: string;
  keys: LedgerKey[];
  eventId: string;
  nowMs: number;
}

/**
 * PostgreSQL: the claims made while the previous call ran (or in one turn, when none ran) in one round
 * trip. The function (migration 0017) locks every key the batch names in one order all gateways share,
 * so two batches never wait on each other in a cycle, then runs each claim all or nothing (0016's
 * `relay_claim_dedup_keys`) in arrival order: of two claims of one key, the earlier is granted. A claim
 * without keys is granted without asking.
 */
async function claimBatchInOneCall(sql: SqlClient, claims: Claim[]): Promise<Array<string | null>> {
  const answers: Array<string | null> = claims.map(() => null);
  const asked = claims.map((claim, index) => ({ claim, index })).filter(({ claim }) => claim.keys.length > 0);
  if (asked.length === 0) return answers;
  const perKey = asked.flatMap(({ claim }, ordinal) => claim.keys.map(({ key, windowMs }) => ({ ordinal: ordinal + 1, claim, key, expiresAt: claim.nowMs + windowMs })));
  const [row] = await sql.all<{ holders: Array<string | null> }>('SELECT relay_claim_dedup_key_batch(?, ?, ?, ?, ?, ?) AS holders', [
    perKey.map(({ ordinal }) => ordinal),
    perKey.map(({ claim }) => claim.sourceId),
    perKey.map(({ key }) => key),
    perKey.map(({ expiresAt }) => expiresAt),
    perKey.map(({ claim }) => claim.eventId),
    perKey.map(({ claim }) => claim.nowMs),
  ]);
  asked.forEach(({ index }, ordinal) => (answers[index] = row?.holders[ordinal] ?? null));
  return answers;
}

interface Holder {
  eventId: string;
  expiresAt: number;
}

const holderKey = (sourceId: string, key: string) => `${sourceId} ${key}`;

/** The holders of every key the claims name, read in one statement per source. */
async function currentHolders(tx: SqlClient, claims: Claim[]): Promise<Map<string, Holder>> {
  const keysBySource = new Map<string, Set<string>>();
  for (const { sourceId, keys } of claims) {
    const named = keysBySource.get(sourceId) ?? new Set<string>();
    for (const { key } of keys) named.add(key);
    keysBySource.set(sourceId, named);
  }
  const holders = new Map<string, Holder>();
  for (const [sourceId, named] of keysBySource) {
    const rows = await tx.all<{ dedup_key: string; event_id: string; expires_at: number }>(
      `SELECT dedup_key, event_id, expires_at FROM dedup_keys WHERE source_id = ? AND dedup_key IN (${[...named].map(() => '?').join(', ')})`,
      [sourceId, ...named],
    );
    for (const row of rows) holders.set(holderKey(sourceId, row.dedup_key), { eventId: row.event_id, expiresAt: Number(row.expires_at) });
  }
  return holders;
}

/**
 * SQLite: the claims of one turn in one write transaction, which excludes every other writer. Each is
 * decided in order against the holders read at the start and the claims granted before it, then every
 * granted key is written by one statement: a few statements per turn, however many claims it has.
 */
function claimBatch(sql: SqlClient, claims: Claim[]): Promise<Array<string | null>> {
  return sql.transaction(async (tx) => {
    const holders = await currentHolders(tx, claims);
    const granted = new Map<string, { sourceId: string; key: string; holder: Holder }>();
    const answers = claims.map(({ sourceId, keys, eventId, nowMs }) => {
      for (const { key } of keys) {
        const holder = holders.get(holderKey(sourceId, key));
        if (holder && holder.expiresAt > nowMs) return holder.eventId;
      }
      for (const { key, windowMs } of keys) {
        const holder = { eventId, expiresAt: nowMs + windowMs };
        holders.set(holderKey(sourceId, key), holder);
        granted.set(holderKey(sourceId, key), { sourceId, key, holder });
      }
      return null;
    });
    if (granted.size > 0) {
      const rows = [...granted.values()];
      // Only absent or expired keys were granted: an expired one is taken over in place.
      await tx.run(
        `INSERT INTO dedup_keys (source_id, dedup_key, event_id, expires_at) VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}
         ON CONFLICT (source_id, dedup_key) DO UPDATE SET event_id = excluded.event_id, expires_at = excluded.expires_at`,
        rows.flatMap(({ sourceId, key, holder }) => [sourceId, key, holder.eventId, holder.expiresAt]),
      );
    }
    return answers;
  });
}

export function createDedupLedger(sql: SqlClient): DedupLedger {
  // On PostgreSQL a batch is one round trip (each query is a socket write on both ends).
  const runBatch = sql.kind === 'sqlite' ? claimBatch : claimBatchInOneCall;
  const claim = storeBatcher(sql, (claims: Claim[]) => runBatch(sql, claims));
  return {
    claim: (sourceId, keys, eventId, nowMs) => claim({ sourceId, keys, eventId, nowMs }),
    async release(sourceId, keys, eventId) {
      if (keys.length === 0) return;
      await sql.run(
        `DELETE FROM dedup_keys WHERE source_id = ? AND event_id = ? AND dedup_key IN (${keys.map(() => '?').join(', ')})`,
        [sourceId, eventId, ...keys.map((k) => k.key)],
      );
    },
    purgeExpired: (nowMs) =>
      deleteInChunks((limit) =>
        sql.run(
          `DELETE FROM dedup_keys WHERE (source_id, dedup_key) IN
             (SELECT source_id, dedup_key FROM dedup_keys WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
          [nowMs, limit],
        ),
      ),
  };
}
