import { z } from 'zod';
import { ValidationError } from '../errors/errors.js';
import { parseInput } from '../http/validate.js';
import { DestinationEntity, type DestinationRow } from '../store/entities/destination.js';
import { createDestinationSchema } from '../destinations/destination-schema.js';
import { destinationSettings } from '../destinations/destination-settings.js';
import { newDestinationRow } from '../destinations/new-destination-row.js';
import { checkAddresses, resolveTarget, withoutUnknownCredentials } from '../destinations/destination-target.js';
import { openQueueTarget } from '../destinations/queue-target-seal.js';
import { maskedTarget } from '../destinations/queue-target.js';
import { openHeaders, redactedHeaders, resolveHeaders } from '../destinations/destination-headers.js';
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

/**
 * The new row for an entry; redacted credentials are left out (authType none). Redacted or masked header
 * values and a queue target's masked credentials stand for the `current` row's (an overwrite); those with
 * no stored value are left out and named, and the destination is imported disabled: it must not deliver
 * without what its receiver expects.
 */
function buildRow(deps: TransferDeps, orgId: string, sent: DestinationEntry, slug: string, current?: DestinationRow) {
  const { input: entry, leftOut: credentialsLeftOut } = withoutUnknownCredentials(deps.secrets, sent, current);
  const { isActive, authConfig, ...settings } = entry;
  const redacted = credentialsRedacted(entry);
  const { unknown } = resolveHeaders(deps.secrets, entry.headers ?? {}, current);
  const headers = Object.fromEntries(Object.entries(entry.headers ?? {}).filter(([name]) => !unknown.includes(name)));
  const leftOut = unknown.length > 0 || credentialsLeftOut.length > 0;
  const row = newDestinationRow(
    deps,
    orgId,
    slug,
    { ...settings, headers, enabled: leftOut ? false : isActive, authType: redacted ? 'none' : settings.authType, authConfig: authConfig === REDACTED ? undefined : authConfig },
    resolveTarget(deps.secrets, entry, current).columns,
    current,
  );
  return { row, lost: { headers: unknown, credentials: credentialsLeftOut } };
}

/** The import's warnings, with one naming the headers and one the target credentials left out when there are some. */
function withoutLost(row: DestinationRow, lost: { headers: string[]; credentials: string[] }, warnings: string[]) {
  const more = [
    ...(lost.headers.length > 0 ? [`headers ${lost.headers.join(', ')} are redacted with no stored value: the destination is imported disabled without them; set them, then enable it`] : []),
    ...(lost.credentials.length > 0 ? [`${lost.credentials.join(', ')} credentials are masked with no stored value: the destination is imported disabled without them; set them, then enable it`] : []),
  ];
  return { row, warnings: [...warnings, ...more] };
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
    const headers = includeSensitive ? openHeaders(deps.secrets, row) : redactedHeaders(deps.secrets, row);
    const queue = openQueueTarget(row, deps.secrets);
    const target = queue && (includeSensitive ? (queue.target as Record<string, unknown>) : maskedTarget(queue));
    const { type, ...settings } = destinationSettings(row, { headers, authConfig, target });
    // An HTTP entry stays as SPEC shows it; `type` defaults to http on import.
    return { ...(type === 'http' ? {} : { type }), ...settings, isActive: row.enabled };
  },

  /** As on create, a missing slug is derived from the name. */
  slugOf(entry) {
    if (typeof entry.slug === 'string') return entry.slug;
    return entry.slug === undefined && typeof entry.name === 'string' ? slugify(entry.name) : null;
  },

  parse: (entry) => parseInput(destinationEntrySchema, entry, 'Entry'),

  checkTargets: (deps, entry) => checkAddresses(deps.checkTarget, resolveTarget(deps.secrets, withoutUnknownCredentials(deps.secrets, entry).input)),

  created(deps, orgId, entry, slug) {
    const { row, lost } = buildRow(deps, orgId, entry, slug);
    if (!credentialsRedacted(entry)) return withoutLost(row, lost, []);
    // DESIGN "Export and import": no credentials, so it must not deliver until someone supplies them.
    return withoutLost({ ...row, enabled: false }, lost, [
      `authConfig is redacted: the destination is created disabled and without credentials (authType none instead of ${entry.authType}); set authType and authConfig, then enable it`,
    ]);
  },

  overwritten(deps, entry, current) {
    const { row, lost } = buildRow(deps, current.orgId, entry, current.slug, current);
    if (!credentialsRedacted(entry)) return withoutLost(row, lost, []);
    if (entry.authType !== current.authType) {
      throw new ValidationError('authConfig is redacted, but authType changes: the current credentials cannot be kept', [
        { field: 'authConfig', message: `is redacted while authType changes from ${current.authType} to ${entry.authType}; include the credentials` },
      ]);
    }
    return withoutLost({ ...row, authType: current.authType, authConfigSealed: current.authConfigSealed }, lost, [
      'authConfig is redacted: the current credentials are kept',
    ]);
  },
};
