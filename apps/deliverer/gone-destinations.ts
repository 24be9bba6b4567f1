import type { ResourceChange } from '../../libs/pipeline/config-change.js';
import { disableGoneDestination } from '../../libs/destinations/destination-queries.js';
import type { SqlClient } from '../../libs/store/sql-client.js';

/** What the deliverer does with a destination that answered `410 Gone`; the composition root passes one. */
export interface GoneDestinations {
  /** Disables it (reason `gone`); false when it was already disabled, so only the first answer counts. */
  disable(orgId: string, destinationId: string, at: number): Promise<boolean>;
}

/**
 * Over the store: the destination is disabled as if by PATCH, and every process hears of it through
 * relay.config (API views, other deliverers' cached lookups).
 */
export function createGoneDestinations(sql: SqlClient, announce: (change: ResourceChange) => Promise<void>): GoneDestinations {
  return {
    async disable(orgId, destinationId, at) {
      if (!(await disableGoneDestination(sql, orgId, destinationId, at))) return false;
      await announce({ kind: 'destination', action: 'updated', orgId, id: destinationId });
      return true;
    },
  };
}
