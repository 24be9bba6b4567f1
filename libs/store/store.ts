import { createHash, randomBytes } from 'node:crypto';
import type { DataSource, Repository } from 'typeorm';
import type { Plan } from '../config/config.js';
import { newId } from '../ids/ids.js';
import { ApiKeyEntity, type ApiKeyRow } from './entities/api-key.js';
import { DestinationEntity, type DestinationRow } from './entities/destination.js';
import { OrganizationEntity, type OrganizationRow } from './entities/organization.js';
import { RouteEntity, type RouteRow } from './entities/route.js';
import { SourceEntity, type SourceRow } from './entities/source.js';
import { openDataSource, databaseKind, type DataSourceOptions, type DatabaseKind } from './data-source.js';
import { OrgScopedRepository } from './org-scoped-repository.js';
import { openSqlClient, type SqlClient, type SqlClientOptions } from './sql-client.js';

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

export class OrganizationRepository {
  private readonly repo: Repository<OrganizationRow>;
  private readonly keys: Repository<ApiKeyRow>;

  constructor(dataSource: DataSource) {
    this.repo = dataSource.getRepository(OrganizationEntity);
    this.keys = dataSource.getRepository(ApiKeyEntity);
  }

  bySlug(slug: string): Promise<OrganizationRow | null> {
    return this.repo.findOneBy({ slug });
  }

  byId(id: string): Promise<OrganizationRow | null> {
    return this.repo.findOneBy({ id });
  }

  list(): Promise<OrganizationRow[]> {
    return this.repo.find({ order: { slug: 'ASC' } });
  }

  async create(slug: string, plan: Plan): Promise<OrganizationRow> {
    const row: OrganizationRow = { id: newId('org'), slug, plan, createdAt: Date.now() };
    await this.repo.insert(row);
    return row;
  }

  async setPlan(id: string, plan: Plan): Promise<void> {
    await this.repo.update({ id }, { plan });
  }

  /** Creates a key and returns its plaintext; only the hash is kept. */
  async createKey(orgId: string, name: string): Promise<{ id: string; key: string }> {
    const key = `rk_${randomBytes(24).toString('base64url')}`;
    return { id: await this.addKey(orgId, name, key), key };
  }

  /** Registers a key chosen by the operator (bootstrap); idempotent on the key itself. */
  async ensureKey(orgId: string, name: string, key: string): Promise<void> {
    const existing = await this.keys.findOneBy({ keyHash: hashApiKey(key) });
    if (!existing) await this.addKey(orgId, name, key);
  }

  async countKeys(): Promise<number> {
    return this.keys.count();
  }

  /** The organization a key belongs to, or null for an unknown key. */
  async authenticate(key: string): Promise<OrganizationRow | null> {
    const row = await this.keys.findOneBy({ keyHash: hashApiKey(key) });
    return row ? this.byId(row.orgId) : null;
  }

  private async addKey(orgId: string, name: string, key: string): Promise<string> {
    const id = newId('key');
    await this.keys.insert({ id, orgId, keyHash: hashApiKey(key), name, createdAt: Date.now(), lastUsedAt: null });
    return id;
  }
}

/** Everything the apps persist, behind org-scoped repositories. */
export interface Store {
  kind: DatabaseKind;
  dataSource: DataSource;
  /** Driver-level access for hot paths, on connections of its own. */
  sql: SqlClient;
  organizations: OrganizationRepository;
  sources: OrgScopedRepository<SourceRow>;
  destinations: OrgScopedRepository<DestinationRow>;
  routes: OrgScopedRepository<RouteRow>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openStore(options: DataSourceOptions & Pick<SqlClientOptions, 'onBackgroundError'>): Promise<Store> {
  const dataSource = await openDataSource(options);
  const sql = openSqlClient(options);
  return {
    kind: databaseKind(dataSource),
    dataSource,
    sql,
    organizations: new OrganizationRepository(dataSource),
    sources: new OrgScopedRepository(dataSource, SourceEntity),
    destinations: new OrgScopedRepository(dataSource, DestinationEntity),
    routes: new OrgScopedRepository(dataSource, RouteEntity),
    ping: async () => {
      await dataSource.query('SELECT 1');
    },
    close: async () => {
      await sql.close();
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}
