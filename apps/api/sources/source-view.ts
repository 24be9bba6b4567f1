import { z } from 'zod';
import { DIGEST_ALGORITHMS, DIGEST_ENCODINGS } from '../../../libs/signatures/verification-config.js';
import { maskSecret } from '../../../libs/secrets/mask-secret.js';
import type { SourceRow } from '../../../libs/store/entities/source.js';
import type { ApiDeps, Caller } from '../api-deps.js';
import { ingestSettings } from '../../../libs/sources/ingest-settings.js';
import { DEDUP_STRATEGIES, PROVIDERS } from '../../../libs/sources/source-schema.js';
import { isoTime as iso } from '../../../libs/time/iso-time.js';
import { EXAMPLE_TIME, maskedSecret, timestamp } from '../openapi/shared-schemas.js';

export function webhookUrl(tenant: Caller, row: SourceRow): string {
  return `${tenant.publicUrl}/ingest/${tenant.org.slug}/${row.slug}`;
}

/** The verification settings with the secret masked (`****` + last 4). */
function maskedVerification(deps: ApiDeps, row: SourceRow) {
  if (row.secretSealed === null) return row.verification;
  return { ...row.verification, secret: maskSecret(deps.secrets.open(row.secretSealed)) };
}

/** `eventsCount` is the source's stored events, counted by the store (libs/store/event-counts.ts). */
export function sourceView(deps: ApiDeps, tenant: Caller, row: SourceRow, eventsCount: number) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    provider: row.provider,
    webhookUrl: webhookUrl(tenant, row),
    verificationConfig: maskedVerification(deps, row),
    ...ingestSettings(row),
    enabled: row.enabled,
    eventsCount,
    lastEventAt: iso(row.lastEventAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** The list form: id, name, slug, webhookUrl, enabled, eventsCount (SPEC 2.2). */
export function sourceSummary(deps: ApiDeps, tenant: Caller, row: SourceRow, eventsCount: number) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    webhookUrl: webhookUrl(tenant, row),
    enabled: row.enabled,
    eventsCount,
  };
}

const VERIFICATION_TYPES = ['codehost', 'payments', 'chat', 'commerce', 'telecom', 'standard', 'hmac', 'none'] as const;

/** verificationConfig as responses show it: the secret masked (or omitted for `none`). */
export const verificationViewSchema = z
  .object({
    type: z.enum(VERIFICATION_TYPES),
    secret: maskedSecret.optional(),
    toleranceSeconds: z.number().int().optional(),
    algorithm: z.enum(DIGEST_ALGORITHMS).optional(),
    header: z.string().optional(),
    encoding: z.enum(DIGEST_ENCODINGS).optional(),
    prefix: z.string().optional(),
  })
  .meta({ id: 'VerificationConfigView' });

export const sourceViewSchema = z
  .object({
    id: z.string().meta({ example: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7' }),
    name: z.string(),
    slug: z.string(),
    description: z.string().nullable(),
    provider: z.enum(PROVIDERS).nullable(),
    webhookUrl: z.string(),
    verificationConfig: verificationViewSchema,
    rejectInvalidSignatures: z.boolean(),
    rateLimitPerMinute: z.number().int().nullable(),
    ipFilterMode: z.enum(['none', 'allowlist', 'denylist']),
    ipAllowlist: z.array(z.string()),
    ipDenylist: z.array(z.string()),
    encryptFields: z.array(z.string()),
    maskFields: z.array(z.string()),
    dedupEnabled: z.boolean(),
    dedupStrategy: z.enum(DEDUP_STRATEGIES),
    dedupWindowHours: z.number().int(),
    dedupCustomHeader: z.string().nullable(),
    enabled: z.boolean(),
    eventsCount: z.number().int(),
    lastEventAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Source' });

export const sourceSummarySchema = sourceViewSchema.pick({ id: true, name: true, slug: true, webhookUrl: true, enabled: true, eventsCount: true }).meta({ id: 'SourceSummary' });

export const sourceExample: z.input<typeof sourceViewSchema> = {
  id: 'src_01JDQ4Z6W8K3M5N7P9R1T3V5X7',
  name: 'GitHub',
  slug: 'github',
  description: 'Push and pull request events',
  provider: 'codehost',
  webhookUrl: 'https://hooks.example.com/ingest/acme/github',
  verificationConfig: { type: 'codehost', secret: '****Xk9=', toleranceSeconds: 300 },
  rejectInvalidSignatures: true,
  rateLimitPerMinute: null,
  ipFilterMode: 'none',
  ipAllowlist: [],
  ipDenylist: [],
  encryptFields: [],
  maskFields: ['$.sender.email'],
  dedupEnabled: true,
  dedupStrategy: 'auto',
  dedupWindowHours: 24,
  dedupCustomHeader: null,
  enabled: true,
  eventsCount: 1280,
  lastEventAt: EXAMPLE_TIME,
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_TIME,
};

export const sourceSummaryExample: z.input<typeof sourceSummarySchema> = {
  id: sourceExample.id,
  name: sourceExample.name,
  slug: sourceExample.slug,
  webhookUrl: sourceExample.webhookUrl,
  enabled: true,
  eventsCount: 1280,
};

export const rotatedSecretSchema = z
  .object({
    id: z.string(),
    verificationConfig: z.object({ type: z.enum(VERIFICATION_TYPES), secret: z.string() }),
    previousSecretExpiresAt: z.string().optional().meta({ description: 'With a grace period: until when signatures made with the previous secret are accepted' }),
    message: z.string(),
  })
  .meta({ id: 'RotatedSourceSecret' });
