import type { SourceRow } from '../store/entities/source.js';

/**
 * How the gateway treats a source's requests (signatures, rate, IP filter, payload protection, dedup), as
 * both the API view and the export entry show them.
 */
export function ingestSettings(row: SourceRow) {
  return {
    rejectInvalidSignatures: row.rejectInvalidSignatures,
    rateLimitPerMinute: row.rateLimitPerMinute,
    ipFilterMode: row.ipFilterMode,
    ipAllowlist: row.ipAllowlist,
    ipDenylist: row.ipDenylist,
    encryptFields: row.encryptFields,
    maskFields: row.maskFields,
    dedupEnabled: row.dedupEnabled,
    dedupStrategy: row.dedupStrategy,
    dedupWindowHours: row.dedupWindowHours,
    dedupCustomHeader: row.dedupCustomHeader,
  };
}
