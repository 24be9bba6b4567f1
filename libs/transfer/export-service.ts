import type { Tenant } from '../tenancy/tenant.js';
import { isoTime } from '../time/iso-time.js';
import { requireOwnRows } from './own-rows.js';
import { EXPORT_VERSION, type ProgressListener, type TransferDeps, type TransferKind, type TransferRow } from './transfer-kind.js';

export interface ExportOptions {
  /** Only these (all of the organization's when absent); an unknown or foreign id is 404. */
  ids?: readonly string[];
  /** Secrets in clear instead of `***REDACTED***`. */
  includeSensitive?: boolean;
  onProgress?: ProgressListener;
}

/** The version 1.0 envelope (SPEC 2.8); entries sorted by slug so that exports kept in version control diff well. */
export async function exportResources<Row extends TransferRow>(
  deps: TransferDeps,
  tenant: Tenant,
  kind: TransferKind<Row, unknown>,
  options: ExportOptions = {},
) {
  const orgId = tenant.org.id;
  const rows = options.ids ? await requireOwnRows(deps.store, orgId, kind, options.ids) : await kind.repository(deps.store).findBy(orgId);
  rows.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const entries = rows.map((row, index) => {
    options.onProgress?.({ phase: 'exporting', done: index + 1, total: rows.length });
    return kind.toEntry(deps, row, options.includeSensitive ?? false);
  });
  return {
    version: EXPORT_VERSION,
    exportedAt: isoTime(deps.now()),
    organizationSlug: tenant.org.slug,
    [kind.collection]: entries,
  };
}
