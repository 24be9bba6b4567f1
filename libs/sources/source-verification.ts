import { generateSigningSecret } from '../secrets/signing-secret.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { DEFAULT_TOLERANCE_SECONDS, type VerificationConfigInput } from '../signatures/verification-config.js';

/** Providers whose webhooks are signed in a known way; their source verifies that way unless told otherwise. */
const PROVIDER_VERIFICATION: Partial<Record<string, VerificationConfigInput['type']>> = {
  codehost: 'codehost',
  payments: 'payments',
  commerce: 'commerce',
  chat: 'chat',
  telecom: 'telecom',
};

interface SealedVerification {
  verification: Record<string, unknown>;
  secretSealed: string | null;
}

/** Splits a verification config into its stored settings and its sealed secret (generated when absent). */
export function sealVerification(deps: { secrets: SecretBox }, config: VerificationConfigInput, keepSecret: string | null): SealedVerification {
  const { secret, ...settings } = config as VerificationConfigInput & { secret?: string };
  if (config.type === 'none') return { verification: settings, secretSealed: null };
  if (secret !== undefined) return { verification: settings, secretSealed: deps.secrets.seal(secret) };
  return { verification: settings, secretSealed: keepSecret ?? deps.secrets.seal(generateSigningSecret()) };
}

export function defaultVerification(provider: string | null | undefined): VerificationConfigInput {
  const type = provider ? PROVIDER_VERIFICATION[provider] : undefined;
  return (type ? { type, toleranceSeconds: DEFAULT_TOLERANCE_SECONDS } : { type: 'none' }) as VerificationConfigInput;
}
