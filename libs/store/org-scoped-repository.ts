import type { DataSource, EntitySchema, ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';

export interface PageQuery {
  page: number;
  pageSize: number;
}

export interface Page<T> {
  rows: T[];
  total: number;
}

export interface ListFilter {
  /** Exact matches on entity properties. */
  equals?: Record<string, unknown>;
  /** Case-insensitive substring over any of these properties. */
  search?: { text: string; properties: string[] };
}

interface OrgOwned extends ObjectLiteral {
  id: string;
  orgId: string;
  createdAt: number;
}

const escapeLike = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Data access for a resource that belongs to an organization. Every method takes the organization id as
 * its first argument, so no query can forget the tenant.
 */
export class OrgScopedRepository<T extends OrgOwned> {
  protected readonly repo: Repository<T>;

  constructor(dataSource: DataSource, entity: EntitySchema<T>) {
    this.repo = dataSource.getRepository(entity);
  }

  async get(orgId: string, id: string): Promise<T | null> {
    return this.repo.findOne({ where: { orgId, id } as never });
  }

  async findOneBy(orgId: string, where: Partial<T>): Promise<T | null> {
    return this.repo.findOne({ where: { ...where, orgId } as never });
  }

  async findBy(orgId: string, where: Partial<T> = {}): Promise<T[]> {
    return this.repo.find({ where: { ...where, orgId } as never, order: { createdAt: 'DESC', id: 'DESC' } as never });
  }

  async findByIds(orgId: string, ids: string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    return this.scoped(orgId).andWhere('row.id IN (:...ids)', { ids }).getMany();
  }

  async list(orgId: string, page: PageQuery, filter: ListFilter = {}): Promise<Page<T>> {
    const query = this.scoped(orgId);
    for (const [property, value] of Object.entries(filter.equals ?? {})) {
      if (value !== undefined) query.andWhere(`row.${property} = :${property}`, { [property]: value });
    }
    if (filter.search && filter.search.text !== '') {
      const clauses = filter.search.properties.map((p) => `LOWER(row.${p}) LIKE :search ESCAPE '\\'`);
      query.andWhere(`(${clauses.join(' OR ')})`, { search: `%${escapeLike(filter.search.text)}%` });
    }
    const [rows, total] = await query
      .orderBy('row.createdAt', 'DESC')
      .addOrderBy('row.id', 'DESC')
      .skip((page.page - 1) * page.pageSize)
      .take(page.pageSize)
      .getManyAndCount();
    return { rows, total };
  }

  async insert(row: T): Promise<T> {
    await this.repo.insert(row as never);
    return row;
  }

  /** Applies the patch and returns the updated row, or null when the id is not the organization's. */
  async update(orgId: string, id: string, patch: Partial<T>): Promise<T | null> {
    const result = await this.repo.update({ orgId, id } as never, patch as never);
    if (!result.affected) return null;
    return this.get(orgId, id);
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    const result = await this.repo.delete({ orgId, id } as never);
    return (result.affected ?? 0) > 0;
  }

  async deleteMany(orgId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.repo
      .createQueryBuilder()
      .delete()
      .where('org_id = :orgId', { orgId })
      .andWhere('id IN (:...ids)', { ids })
      .execute();
    return result.affected ?? 0;
  }

  protected scoped(orgId: string): SelectQueryBuilder<T> {
    return this.repo.createQueryBuilder('row').where('row.orgId = :orgId', { orgId });
  }
}
