import { z } from 'zod';
import { isValidIpRule } from '../net/ip-rules.js';
import { compileFieldPath, FieldPathError } from '../payload/field-path.js';
import { specCode } from '../http/validate.js';
import { verificationConfigSchema } from '../signatures/verification-config.js';
import { isMaskedValue } from '../secrets/masked-value.js';

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const slugSchema = z
  .string()
  .max(100, 'must be at most 100 characters')
  .refine((s) => SLUG_PATTERN.test(s), { message: 'must be lowercase alphanumeric with hyphens', ...specCode('INVALID_SLUG') });

export const nameSchema = z.string().trim().min(1, 'is required').max(200);
export const descriptionSchema = z.string().max(2000).nullable();
export const rateLimitSchema = z.number().int().min(1).max(10_000_000).nullable();

const ipRule = z.string().trim().max(64).refine(isValidIpRule, 'must be an IPv4/IPv6 address or CIDR');
/** Compiled here, so a path that routing could not evaluate is refused with its fault named. */
const jsonPath = z
  .string()
  .min(2)
  .max(500)
  .superRefine((path, ctx) => {
    try {
      compileFieldPath(path);
    } catch (error) {
      if (!(error instanceof FieldPathError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message });
    }
  });
const headerName = z
  .string()
  .max(200)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');

export const PROVIDERS = ['codehost', 'payments', 'commerce', 'chat', 'telecom', 'custom', 'generic'] as const;
export const DEDUP_STRATEGIES = ['auto', 'provider_id', 'payload_hash', 'idempotency_key', 'none'] as const;

/** A masked secret sent back from a fetched source means "unchanged": it is dropped, so the secret is kept or generated. */
const verificationInput = z.preprocess((value) => {
  if (value === null || typeof value !== 'object' || !isMaskedValue((value as { secret?: unknown }).secret)) return value;
  const { secret: _masked, ...rest } = value as Record<string, unknown>;
  return rest;
}, verificationConfigSchema);

/** Settable fields shared by create and patch; everything optional here, defaults applied on create. */
const sourceSettings = {
  name: nameSchema,
  description: descriptionSchema,
  provider: z.enum(PROVIDERS).nullable(),
  verificationConfig: verificationInput,
  rejectInvalidSignatures: z.boolean(),
  rateLimitPerMinute: rateLimitSchema,
  ipFilterMode: z.enum(['none', 'allowlist', 'denylist']),
  ipAllowlist: z.array(ipRule).max(1000),
  ipDenylist: z.array(ipRule).max(1000),
  encryptFields: z.array(jsonPath).max(100),
  maskFields: z.array(jsonPath).max(100),
  dedupEnabled: z.boolean(),
  dedupStrategy: z.enum(DEDUP_STRATEGIES),
  dedupWindowHours: z.number().int().min(1).max(168),
  dedupCustomHeader: headerName.nullable(),
  enabled: z.boolean(),
};

/** Fields the API returns but never takes; a client may send a fetched source back unchanged. */
export const SOURCE_READ_ONLY = ['id', 'webhookUrl', 'eventsCount', 'lastEventAt', 'createdAt', 'updatedAt'];

export const createSourceSchema = z.strictObject({ ...sourceSettings, slug: slugSchema }).partial().required({ name: true, slug: true });

/** The slug is part of the webhook URL: it may be repeated unchanged, never changed. */
export const patchSourceSchema = z.strictObject({ ...sourceSettings, slug: z.string() }).partial();

export type CreateSourceInput = z.output<typeof createSourceSchema>;
export type PatchSourceInput = z.output<typeof patchSourceSchema>;
