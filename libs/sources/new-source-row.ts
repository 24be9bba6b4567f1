import { newId } from '../ids/ids.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { SourceRow } from '../store/entities/source.js';
import { checkSourceConsistency } from './source-consistency.js';
import type { CreateSourceInput } from './source-schema.js';
import { defaultVerification, sealVerification } from './source-verification.js';

/** A new source with every create default, checked by the cross-field rules; nothing is written (the API and imports share it). */
export function newSourceRow(deps: { secrets: SecretBox; now: () => number }, orgId: string, input: CreateSourceInput): SourceRow {
  const now = deps.now();
  const sealed = sealVerification(deps, input.verificationConfig ?? defaultVerification(input.provider), null);
  const row: SourceRow = {
    id: newId('src'),
    orgId,
    name: input.name,
    slug: input.slug,
    description: input.description ?? null,
    provider: input.provider ?? null,
    ...sealed,
    rejectInvalidSignatures: input.rejectInvalidSignatures ?? false,
    rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    ipFilterMode: input.ipFilterMode ?? 'none',
    ipAllowlist: input.ipAllowlist ?? [],
    ipDenylist: input.ipDenylist ?? [],
    encryptFields: input.encryptFields ?? [],
    maskFields: input.maskFields ?? [],
    dedupEnabled: input.dedupEnabled ?? false,
    dedupStrategy: input.dedupStrategy ?? 'auto',
    dedupWindowHours: input.dedupWindowHours ?? 24,
    dedupCustomHeader: input.dedupCustomHeader ?? null,
    enabled: input.enabled ?? true,
    lastEventAt: null,
    createdAt: now,
    updatedAt: now,
  };
  checkSourceConsistency(row);
  return row;
}
