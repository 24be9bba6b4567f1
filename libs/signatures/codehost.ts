import { verifyBodyHmac } from './hmac.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';
import { PROVIDER_SIGNATURE_HEADERS } from './signature-header.js';

/** `X-Hub-Signature-256: sha256=<hex>` = HMAC-SHA256(secret, body). */
export const verifyCodehost: Verifier<ProviderVerificationConfig<'codehost'>> = ({ secret }, request) =>
  verifyBodyHmac({ secret, algorithm: 'sha256', header: PROVIDER_SIGNATURE_HEADERS.codehost, encoding: 'hex', prefix: 'sha256=' }, request);
