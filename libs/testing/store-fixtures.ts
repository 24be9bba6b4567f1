import type { Context } from 'mocha';
import { newId } from '../ids/ids.js';
import type { StoreTarget } from './store-targets.js';
import type { DestinationRow } from '../store/entities/destination.js';
import type { OrganizationRow } from '../store/entities/organization.js';
import type { SourceRow } from '../store/entities/source.js';
import type { SqlClient } from '../store/sql-client.js';
import { openStore, type Store } from '../store/store.js';
import { chunkMayHold, likePattern, sqliteIndexedEvents, sqliteTextHolds, trigramQuery } from '../store/search-index.js';

/** A migrated, empty store on one backend, and a way to add sources (rows other tables point at) to one organization. */
export interface StoreFixture {
  store: Store;
  /** The store's data directory (its SQLite files when it has no database URL). */
  dataDir: string;
  /** The organization every source of the fixture belongs to. */
  org: OrganizationRow;
  createSource(): Promise<{ id: string; slug: string }>;
  close(): Promise<void>;
}

/** A destination row under `orgId` signing with the sealed secret: POST to an address nothing listens on, no auth, enabled, unordered. */
export function destinationRow(orgId: string, signingSecretSealed: string, overrides: Partial<DestinationRow> = {}): DestinationRow {
  const now = Date.now();
  const id = newId('dst');
  return {
    id,
    orgId,
    name: 'Fixture',
    slug: id.slice(-12),
    type: 'http',
    url: 'http://127.0.0.1:9/unset',
    targetSealed: null,
    method: 'POST',
    description: null,
    headers: {},
    headersSealed: null,
    authType: 'none',
    authConfigSealed: null,
    signingSecretSealed,
    timeoutMs: 5000,
    rateLimitPerMinute: null,
    retryPolicy: { maxRetries: 5, initialDelay: 100, maxDelay: 60_000, backoffMultiplier: 2 },
    enabled: true,
    ordering: 'none',
    autoDisableAfterSeconds: null,
    disabledReason: null,
    disabledAt: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

/** A source row with the spec's defaults (no verification, no filters, dedup off), enabled, under `orgId`. */
export function sourceRow(orgId: string, overrides: Partial<SourceRow> = {}): SourceRow {
  const now = Date.now();
  const id = newId('src');
  return {
    id,
    orgId,
    name: 'Fixture',
    slug: id.slice(-12),
    description: null,
    provider: null,
    verification: { type: 'none' },
    secretSealed: null,
    rejectInvalidSignatures: false,
    rateLimitPerMinute: null,
    ipFilterMode: 'none',
    ipAllowlist: [],
    ipDenylist: [],
    encryptFields: [],
    maskFields: [],
    dedupEnabled: false,
    dedupStrategy: 'auto',
    dedupWindowHours: 24,
    dedupCustomHeader: null,
    enabled: true,
    lastEventAt: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

export async function openStoreFixture(mocha: Context, target: StoreTarget): Promise<StoreFixture> {
  const location = await target.prepare(mocha);
  const store = await openStore({ databaseUrl: location.databaseUrl, dataDir: location.dataDir });
  const org = await store.organizations.create(`org-${newId('org').slice(-8)}`, 'pro');
  return {
    store,
    dataDir: location.dataDir,
    org,
    async createSource() {
      const row = await store.sources.insert(sourceRow(org.id));
      return { id: row.id, slug: row.slug };
    },
    async close() {
      await store.close();
      await location.cleanup();
    },
  };
}

/** Stores an event row as the router's insert does (one INSERT, no deliveries) with this payload text; its id. */
export async function insertEventRow(sql: SqlClient, orgId: string, sourceId: string, payloadText: string | null): Promise<string> {
  const id = newId('evt');
  const now = Date.now();
  await sql.run(
    `INSERT INTO events (id, org_id, source_id, status, headers, payload_text, payload_size, payload_hash, signature_valid,
       received_at, validated_at, queued_at, created_at, deliveries_count, deliveries_succeeded, deliveries_failed)
     VALUES (?, ?, ?, 'delivered', '{}', ?, 10, 'sha256:x', ?, ?, ?, ?, ?, 0, 0, 0)`,
    [id, orgId, sourceId, payloadText, sql.bool(true), now, now, now, now],
  );
  return id;
}

/**
 * The events the search index itself finds for `term` (nothing of the unindexed tail), ordered by id.
 * The chunks of both stores name several events each and hold their words (PostgreSQL) or texts (SQLite):
 * those events whose own text holds the term.
 */
export async function eventsInSearchIndex(sql: SqlClient, term: string): Promise<string[]> {
  const chunks = chunkMayHold(term);
  const holds = sqliteTextHolds('e.payload_text', term);
  const rows =
    sql.kind === 'postgres'
      ? await sql.all<{ id: string }>(
          `SELECT id FROM events WHERE payload_text ILIKE ? ESCAPE '\\' AND id IN (SELECT unnest(event_ids) FROM search_chunks WHERE ${chunks.condition}) ORDER BY id`,
          [likePattern(term), ...chunks.params],
        )
      : await sql.all<{ id: string }>(
          `SELECT e.id FROM ${sqliteIndexedEvents('e')} WHERE events_search MATCH ? AND ${holds.condition} ORDER BY e.id`,
          [trigramQuery(term), ...holds.params],
        );
  return rows.map((row) => row.id);
}

/** Empties the search index as a lost one would be, leaving the events and the queue of unindexed ones as they are. */
export async function loseSearchIndex(sql: SqlClient): Promise<void> {
  await sql.run(sql.kind === 'postgres' ? 'DELETE FROM search_chunks' : "INSERT INTO events_search (events_search) VALUES ('delete-all')");
}
