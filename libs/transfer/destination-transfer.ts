import { z } from 'zod';
import { ValidationError } from '../errors/errors.js';
import { parseInput } from '../http/validate.js';
import { DestinationEntity, type DestinationRow } from '../store/entities/destination.js';
import { createDestinationSchema } from '../destinations/destination-schema.js';
import { destinationSettings } from '../destinations/destination-settings.js';
import { newDestinationRow } from '../destinations/new-destination-row.js';
import { slugify } from '../slugs/slugs.js';
import { REDACTED, type TransferDeps, type TransferKind } from './transfer-kind.js';

/**
 * An import entry: the create fields with `isActive` for `enabled`; `authConfig` may be redacted. Besides
 * the spec's entry fields, `description` and `retryPolicy` travel too, so a round trip loses nothing.
 */
const destinationEntrySchema = createDestinationSchema.omit({ enabled: true, authConfig: true }).extend({
  isActive: createDestinationSchema.shape.enabled,
  authConfig: z.union([z.literal(REDACTED), createDestinationSchema.shape.authConfig.unwrap()]).optional(),
});

type DestinationEntry = z.output<typeof destinationEntrySchema>;

/** Credentials the entry does not carry: redacted while its authType needs some. */
const credentialsRedacted = (entry: DestinationEntry) => entry.authConfig === REDACTED && (entry.authType ?? 'none') !== 'none';

/** The new row for an entry; redacted credentials are left out (authType none). */
function buildRow(deps: TransferDeps, orgId: string, entry: DestinationEntry, slug: string): DestinationRow {
  const { isActive, authConfig, ...settings } = entry;
  const redacted = credentialsRedacted(entry);
  return newDestinationRow(deps, orgId, slug, {
    ...settings,
    enabled: isActive,
    authType: redacted ? 'none' : settings.authType,
    authConfig: authConfig === REDACTED ? undefined : authConfig,
  });
}

export const destinationTransfer: TransferKind<DestinationRow, DestinationEntry> = {
  collection: 'destinations',
  noun: 'Destination',
  entity: DestinationEntity,
  repository: (store) => store.destinations,
  keptOnOverwrite: ['id', 'orgId', 'slug', 'createdAt', 'signingSecretSealed'],

  toEntry(deps, row, includeSensitive) {
    let authConfig: unknown = {};
    if (row.authConfigSealed !== null) authConfig = includeSensitive ? JSON.parse(deps.secrets.open(row.authConfigSealed)) : REDACTED;
    return { ...destinationSettings(row, authConfig), isActive: row.enabled };
  },

  /** As on create, a missing slug is derived from the name. */
  slugOf(entry) {
    if (typeof entry.slug === 'string') return entry.slug;
    return entry.slug === undefined && typeof entry.name === 'string' ? slugify(entry.name) : null;
  },

  parse: (entry) => parseInput(destinationEntrySchema, entry, 'Entry'),

  checkTargets: (deps, entry) => deps.checkTarget(entry.url, 'url'),

  created(deps, orgId, entry, slug) {
    const row = buildRow(deps, orgId, entry, slug);
    if (!credentialsRedacted(entry)) return { row, warnings: [] };
    // DESIGN "Export and import": no credentials, so it must not deliver until someone supplies them.
    return {
      row: { ...row, enabled: false },
      warnings: [
        `authConfig is redacted: the destination is created disabled and without credentials (authType none instead of ${entry.authType}); set authType and authConfig, then enable it`,
      ],
    };
  },

  overwritten(deps, entry, current) {
    const row = buildRow(deps, current.orgId, entry, current.slug);
    if (!credentialsRedacted(entry)) return { row, warnings: [] };
    if (entry.authType !== current.authType) {
      throw new ValidationError('authConfig is redacted, but authType changes: the current credentials cannot be kept', [
        { field: 'authConfig', message: `is redacted while authType changes from ${current.authType} to ${entry.authType}; include the credentials` },
      ]);
    }
    return {
      row: { ...row, authType: current.authType, authConfigSealed: current.authConfigSealed },
      warnings: ['authConfig is redacted: the current credentials are kept'],
    };
  },
};
