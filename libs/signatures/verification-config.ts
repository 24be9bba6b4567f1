import { z } from 'zod';
import { generateSigningSecret } from '../secrets/signing-secret.js';

export const DIGEST_ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
export const DIGEST_ENCODINGS = ['hex', 'base64', 'base64url'] as const;
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number];
export type DigestEncoding = (typeof DIGEST_ENCODINGS)[number];

/** Verification types whose header layout is fixed by a provider (DESIGN.md section 3). */
export const PROVIDER_VERIFICATION_TYPES = ['codehost', 'payments', 'chat', 'commerce', 'telecom', 'standard'] as const;
export type ProviderVerificationType = (typeof PROVIDER_VERIFICATION_TYPES)[number];

export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface ProviderVerificationConfig<T extends ProviderVerificationType = ProviderVerificationType> {
  type: T;
  secret: string;
  /** How far a signed timestamp may be from now; used by payments, chat and standard. */
  toleranceSeconds?: number;
}

export interface HmacVerificationConfig {
  type: 'hmac';
  secret: string;
  algorithm: DigestAlgorithm;
  /** Name of the header carrying the signature (any case). */
  header: string;
  encoding: DigestEncoding;
  /** Text before the signature in the header value, e.g. `sha256=`. */
  prefix?: string;
}

export interface NoVerificationConfig {
  type: 'none';
}

/** A source's verification settings as the verifier uses them: the secret is always present. */
export type VerificationConfig =
  | { [T in ProviderVerificationType]: ProviderVerificationConfig<T> }[ProviderVerificationType]
  | HmacVerificationConfig
  | NoVerificationConfig;

export type VerificationType = VerificationConfig['type'];

const secretSchema = z.string().min(1).max(512);
// Standard Webhooks secrets are base64 key bytes, optionally behind the `whsec_` marker.
const standardSecretSchema = secretSchema.regex(/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ followed by base64');
const toleranceSchema = z.number().int().min(1).max(86_400).default(DEFAULT_TOLERANCE_SECONDS);
const headerNameSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');

function providerSchema<T extends ProviderVerificationType>(type: T, secret: z.ZodString = secretSchema) {
  return z.strictObject({ type: z.literal(type), secret: secret.optional(), toleranceSeconds: toleranceSchema });
}

/** API input shape: the secret may be left out, a new one is generated (see withSigningSecret). */
export const verificationConfigSchema = z.discriminatedUnion('type', [
  providerSchema('codehost'),
  providerSchema('payments'),
  providerSchema('chat'),
  providerSchema('commerce'),
  providerSchema('telecom'),
  providerSchema('standard', standardSecretSchema),
  z.strictObject({
    type: z.literal('hmac'),
    secret: secretSchema.optional(),
    algorithm: z.enum(DIGEST_ALGORITHMS),
    header: headerNameSchema,
    encoding: z.enum(DIGEST_ENCODINGS),
    prefix: z.string().max(64).optional(),
  }),
  z.strictObject({ type: z.literal('none') }),
]);

export type VerificationConfigInput = z.output<typeof verificationConfigSchema>;

/** Completes validated API input into a usable config, generating the secret when none was given. */
export function withSigningSecret(
  input: VerificationConfigInput,
  generateSecret: () => string = generateSigningSecret,
): VerificationConfig {
  if (input.type === 'none') return input;
  return { ...input, secret: input.secret ?? generateSecret() };
}
