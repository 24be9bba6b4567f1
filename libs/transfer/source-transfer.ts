import { z } from 'zod';
import { ValidationError } from '../errors/errors.js';
import { parseInput } from '../http/validate.js';
import { verificationConfigSchema, type VerificationConfigInput } from '../signatures/verification-config.js';
import { SourceEntity, type SourceRow } from '../store/entities/source.js';
import { createSourceSchema, type CreateSourceInput } from '../sources/source-schema.js';
import { ingestSettings } from '../sources/ingest-settings.js';
import { newSourceRow } from '../sources/new-source-row.js';
import { defaultVerification } from '../sources/source-verification.js';
import { REDACTED, type TransferDeps, type TransferKind } from './transfer-kind.js';

/**
 * An import entry: the create fields with `isActive` for `enabled`, the secret apart in `signingSecret`,
 * and `verificationConfig` without its secret (so custom HMAC settings survive a round trip).
 */
const sourceEntrySchema = createSourceSchema.omit({ enabled: true }).extend({
  isActive: createSourceSchema.shape.enabled,
  signingSecret: z.string().nullable().optional(),
});

type SourceEntry = z.output<typeof sourceEntrySchema>;

function secretMissing(entry: SourceEntry): string {
  return entry.signingSecret === REDACTED ? 'signingSecret is redacted' : 'signingSecret is missing';
}

/** The entry as create input; `secretGiven` tells whether the entry carried a real secret. */
function createInput(entry: SourceEntry, slug: string): { input: CreateSourceInput; secretGiven: boolean } {
  const { isActive, signingSecret, verificationConfig, ...settings } = entry;
  const secret = signingSecret === REDACTED || signingSecret === null ? undefined : signingSecret;
  let verification: VerificationConfigInput = verificationConfig ?? defaultVerification(settings.provider);
  if (secret !== undefined) {
    if (verification.type === 'none') {
      throw new ValidationError('signingSecret is given, but the source does not verify signatures', [
        { field: 'signingSecret', message: 'must be left out or null when verificationConfig type is none' },
      ]);
    }
    // The secret is checked by the rules of its verification type (a `standard` secret must be base64).
    try {
      verification = parseInput(verificationConfigSchema, { ...verification, secret }, 'signingSecret');
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      const details = (error.details ?? []).map((d) => ({ ...d, field: d.field === 'secret' ? 'signingSecret' : `verificationConfig.${d.field}` }));
      throw new ValidationError(error.message, details);
    }
  }
  return { input: { ...settings, slug, enabled: isActive, verificationConfig: verification }, secretGiven: secret !== undefined };
}

function buildRow(deps: TransferDeps, orgId: string, entry: SourceEntry, slug: string): { row: SourceRow; secretGiven: boolean } {
  const { input, secretGiven } = createInput(entry, slug);
  return { row: newSourceRow(deps, orgId, input), secretGiven };
}

const generatedSecretWarning = (entry: SourceEntry) =>
  `${secretMissing(entry)}: the source gets a newly generated secret; rotate it (POST /api/sources/{id}/rotate-secret) to obtain one for the provider`;

export const sourceTransfer: TransferKind<SourceRow, SourceEntry> = {
  collection: 'sources',
  noun: 'Source',
  entity: SourceEntity,
  repository: (store) => store.sources,
  keptOnOverwrite: ['id', 'orgId', 'slug', 'createdAt', 'lastEventAt'],

  toEntry(deps, row, includeSensitive) {
    let signingSecret: string | null = null;
    if (row.secretSealed !== null) signingSecret = includeSensitive ? deps.secrets.open(row.secretSealed) : REDACTED;
    return {
      name: row.name,
      slug: row.slug,
      provider: row.provider,
      description: row.description,
      signingSecret,
      verificationConfig: row.verification,
      ...ingestSettings(row),
      isActive: row.enabled,
    };
  },

  slugOf: (entry) => (typeof entry.slug === 'string' ? entry.slug : null),

  parse(entry) {
    const parsed = parseInput(sourceEntrySchema, entry, 'Entry');
    if (parsed.verificationConfig && 'secret' in parsed.verificationConfig && parsed.verificationConfig.secret !== undefined) {
      throw new ValidationError('verificationConfig carries a secret', [
        { field: 'verificationConfig.secret', message: 'must be left out: in an entry the secret is signingSecret' },
      ]);
    }
    return parsed;
  },

  created(deps, orgId, entry, slug) {
    const { row, secretGiven } = buildRow(deps, orgId, entry, slug);
    return { row, warnings: !secretGiven && row.secretSealed !== null ? [generatedSecretWarning(entry)] : [] };
  },

  overwritten(deps, entry, current) {
    const { row, secretGiven } = buildRow(deps, current.orgId, entry, current.slug);
    if (secretGiven || row.secretSealed === null) return { row, warnings: [] };
    if (current.secretSealed === null) return { row, warnings: [generatedSecretWarning(entry)] };
    // DESIGN "Export and import": a redacted secret keeps the current one on overwrite.
    return { row: { ...row, secretSealed: current.secretSealed }, warnings: [`${secretMissing(entry)}: the current secret is kept`] };
  },
};
