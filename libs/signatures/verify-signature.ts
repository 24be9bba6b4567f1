import { verifyChat } from './chat.js';
import { verifyCodehost } from './codehost.js';
import { verifyCommerce } from './commerce.js';
import { verifyBodyHmac } from './hmac.js';
import { verifyPayments } from './payments.js';
import { invalid, VALID, type SignatureResult } from './signature-result.js';
import { verifyStandard } from './standard.js';
import { verifyTelecom } from './telecom.js';
import type { VerificationConfig, VerificationType } from './verification-config.js';
import type { SignedRequest, Verifier } from './verifier.js';

export interface SignatureInput extends SignedRequest {
  config: VerificationConfig;
  /** The secret before a rotation with a grace period: a signature made with it verifies until `expiresAt` (ms, against `nowMs`). */
  previousSecret?: { secret: string; expiresAt: number };
}

type VerifierRegistry = { [T in VerificationType]: Verifier<Extract<VerificationConfig, { type: T }>> };

const VERIFIERS: VerifierRegistry = {
  codehost: verifyCodehost,
  payments: verifyPayments,
  chat: verifyChat,
  commerce: verifyCommerce,
  telecom: verifyTelecom,
  standard: verifyStandard,
  hmac: verifyBodyHmac,
  none: () => VALID,
};

/**
 * Checks a received webhook against its source's verification config. Bad input (missing or
 * malformed headers, an unknown type or an empty secret read back from storage) is an invalid
 * result with a reason, never an exception.
 */
export function verifySignature(input: SignatureInput): SignatureResult {
  const { previousSecret, ...current } = input;
  const result = verifyWith(current);
  if (result.valid || !previousSecret || input.config.type === 'none' || input.nowMs >= previousSecret.expiresAt) return result;
  const previous = verifyWith({ ...current, config: { ...input.config, secret: previousSecret.secret } });
  return previous.valid ? previous : result;
}

function verifyWith(input: SignatureInput): SignatureResult {
  const { config, ...request } = input;
  if (!Object.hasOwn(VERIFIERS, config.type)) return invalid('unsupported_type');
  if (config.type !== 'none' && !config.secret) return invalid('missing_secret');
  // The registry pairs each type with its verifier; TypeScript cannot follow that through the lookup.
  const verify = VERIFIERS[config.type] as Verifier<VerificationConfig>;
  return verify(config, request);
}
