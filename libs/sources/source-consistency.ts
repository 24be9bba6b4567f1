import { ValidationError } from '../errors/errors.js';
import type { SourceRow } from '../store/entities/source.js';

/** Rules that span fields, checked on the merged result of a create or a patch. */
export function checkSourceConsistency(row: SourceRow): void {
  const details = [];
  if (row.ipFilterMode === 'allowlist' && row.ipAllowlist.length === 0) {
    details.push({ field: 'ipAllowlist', message: 'must not be empty when ipFilterMode is allowlist' });
  }
  if (row.ipFilterMode === 'denylist' && row.ipDenylist.length === 0) {
    details.push({ field: 'ipDenylist', message: 'must not be empty when ipFilterMode is denylist' });
  }
  if (row.dedupEnabled && row.dedupStrategy === 'idempotency_key' && !row.dedupCustomHeader) {
    details.push({ field: 'dedupCustomHeader', message: 'is required when dedupStrategy is idempotency_key' });
  }
  if (details.length) throw new ValidationError(`Source is invalid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
}
