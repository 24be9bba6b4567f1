import { verifyBodyHmac } from './hmac.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';
import { PROVIDER_SIGNATURE_HEADERS } from './signature-header.js';

/** `X-Shopify-Hmac-Sha256: <base64>` = HMAC-SHA256(secret, body). */
export const verifyCommerce: Verifier<ProviderVerificationConfig<'commerce'>> = ({ secret }, request) =>
  verifyBodyHmac({ secret, algorithm: 'sha256', header: PROVIDER_SIGNATURE_HEADERS.commerce, encoding: 'base64' }, request);
