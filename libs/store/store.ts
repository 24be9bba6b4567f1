import type { DataSource, Repository } from 'typeorm';
import type { Plan } from '../config/config.js';
import { newId } from '../ids/ids.js';
import { ApiKeyRepository } from './api-key-repository.js';
import { DestinationEntity, type DestinationRow } from './entities/destination.js';
import { OrganizationEntity, type OrganizationRow } from './entities/organization.js';
import { RouteEntity, type RouteRow } from './entities/route.js';
import { SourceEntity, type SourceRow } from './entities/source.js';
import { openDataSource, databaseKind, type DataSourceOptions, type DatabaseKind } from './data-source.js';
import { OrgScopedRepository } from './org-scoped-repository.js';
import { openSqlClient, type SqlClient, type SqlClientOptions } from './sql-client.js';

export class OrganizationRepository {
  private readonly repo: Repository<OrganizationRow>;

  constructor(dataSource: DataSource) {
    this.repo = dataSource.getRepository(OrganizationEntity);
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
}

/** Everything the apps persist, behind org-scoped repositories. */
export interface Store {
  kind: DatabaseKind;
  dataSource: DataSource;
  /** Driver-level access for hot paths, on connections of its own. */
  sql: SqlClient;
  organizations: OrganizationRepository;
  apiKeys: ApiKeyRepository;
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
    apiKeys: new ApiKeyRepository(dataSource, sql),
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
