import type { OrganizationRow } from '../store/entities/organization.js';

/** The authenticated caller: every domain function acts inside this organization only. */
export interface Tenant {
  org: OrganizationRow;
}
