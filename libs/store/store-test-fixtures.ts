import type { Context } from 'mocha';
import { newId } from '../ids/ids.js';
import type { StoreTarget } from '../testing/store-targets.js';
import type { OrganizationRow } from './entities/organization.js';
import type { SourceRow } from './entities/source.js';
import { openStore, type Store } from './store.js';

/** A migrated, empty store on one backend, and a way to add sources (rows other tables point at) to one organization. */
export interface StoreFixture {
  store: Store;
  /** The organization every source of the fixture belongs to. */
  org: OrganizationRow;
  createSource(): Promise<{ id: string; slug: string }>;
  close(): Promise<void>;
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
    eventsCount: 0,
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
