import type { Tenant } from '../tenancy/tenant.js';
import { requireOwnRows } from './own-rows.js';
import type { TransferDeps, TransferKind, TransferRow } from './transfer-kind.js';

/**
 * Deletes the listed resources of the organization. What hangs off them goes by foreign key: a source's
 * events and deliveries, a destination's routes (its delivery history is not tied to it and stays).
 */
export async function bulkDelete<Row extends TransferRow>(
  deps: TransferDeps,
  tenant: Tenant,
  kind: TransferKind<Row, unknown>,
  ids: readonly string[],
): Promise<{ success: boolean; deleted: number }> {
  await requireOwnRows(deps.store, tenant.org.id, kind, ids);
  const deleted = await kind.repository(deps.store).deleteMany(tenant.org.id, [...ids]);
  return { success: true, deleted };
}
