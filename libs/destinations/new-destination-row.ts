import { retryPolicySchema } from '../delivery/retry-schedule.js';
import { newId } from '../ids/ids.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { generateSigningSecret } from '../secrets/signing-secret.js';
import type { DestinationRow } from '../store/entities/destination.js';
import { sealAuth } from './destination-credentials.js';
import { sealSentHeaders } from './destination-headers.js';
import { DEFAULT_AUTO_DISABLE_AFTER_SECONDS, type CreateDestinationInput } from './destination-schema.js';
import type { TargetColumns } from './destination-target.js';

/**
 * A new destination with every create default, sealed header values and credentials; nothing is written
 * (the API and imports share it). An import's overwrite passes the `current` row: masked or redacted
 * values sent back stand for its stored ones.
 */
export function newDestinationRow(
  deps: { secrets: SecretBox; now: () => number },
  orgId: string,
  slug: string,
  input: CreateDestinationInput,
  /** Where it delivers, validated (`resolveTarget`). */
  target: TargetColumns,
  current?: DestinationRow,
): DestinationRow {
  const now = deps.now();
  const authType = input.authType ?? 'none';
  const enabled = input.enabled ?? true;
  return {
    id: newId('dst'),
    orgId,
    name: input.name,
    slug,
    ...target,
    method: input.method ?? 'POST',
    description: input.description ?? null,
    headers: {},
    headersSealed: sealSentHeaders(deps.secrets, input.headers ?? {}, current),
    authType,
    authConfigSealed: sealAuth(deps, authType, input.authConfig),
    signingSecretSealed: deps.secrets.seal(generateSigningSecret()),
    timeoutMs: input.timeoutMs ?? 30000,
    rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    retryPolicy: input.retryPolicy ?? retryPolicySchema.parse({}),
    ordering: input.ordering ?? 'none',
    autoDisableAfterSeconds: input.autoDisableAfterSeconds === undefined ? DEFAULT_AUTO_DISABLE_AFTER_SECONDS : input.autoDisableAfterSeconds,
    enabled,
    disabledReason: enabled ? null : 'manual',
    disabledAt: enabled ? null : now,
    createdAt: now,
    updatedAt: now,
  };
}
