import { EntitySchema } from 'typeorm';
import type { Plan } from '../../config/config.js';
import { column } from '../columns.js';

export interface OrganizationRow {
  id: string;
  slug: string;
  plan: Plan;
  createdAt: number;
}

export const OrganizationEntity = new EntitySchema<OrganizationRow>({
  name: 'Organization',
  tableName: 'organizations',
  columns: {
    id: column.id(),
    slug: column.varchar(64),
    plan: column.varchar(16),
    createdAt: { ...column.timestamp(), name: 'created_at' },
  },
});
