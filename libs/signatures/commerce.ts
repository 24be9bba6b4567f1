import { verifyBodyHmac } from './hmac.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';

/** `X-Shopify-Hmac-Sha256: <base64>` = HMAC-SHA256(secret, body). */
export const verifyCommerce: Verifier<ProviderVerificationConfig<'commerce'>> = ({ secret }, request) =>
  verifyBodyHmac({ secret, algorithm: 'sha256', header: 'x-shopify-hmac-sha256', encoding: 'base64' }, request);
