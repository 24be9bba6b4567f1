import { encodedDigestMatches, hmacDigest } from './digest.js';
import { singleHeader } from './header-map.js';
import { invalid, isFailure, verdict, type SignatureFailure } from './signature-result.js';
import { checkTimestamp } from './timestamp.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';
import { PROVIDER_SIGNATURE_HEADERS } from './signature-header.js';

interface PaymentsSignatureHeader {
  timestamp: string;
  signatures: string[];
}

/** `t=<unix>,v1=<hex>[,v1=<hex>...]`; other schemes (v0) are ignored, as the provider's library does. */
function parseHeader(value: string): PaymentsSignatureHeader | SignatureFailure {
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const item of value.split(',')) {
    const separator = item.indexOf('=');
    if (separator < 0) return invalid('malformed_header');
    const key = item.slice(0, separator).trim();
    const field = item.slice(separator + 1).trim();
    if (key === 't') timestamps.push(field);
    if (key === 'v1') signatures.push(field);
  }
  if (timestamps.length !== 1 || signatures.length === 0) return invalid('malformed_header');
  return { timestamp: timestamps[0], signatures };
}

/** `Stripe-Signature`; HMAC-SHA256(secret, `t.body`); any v1 may match (several during a secret roll). */
export const verifyPayments: Verifier<ProviderVerificationConfig<'payments'>> = (config, { headers, rawBody, nowMs }) => {
  const value = singleHeader(headers, PROVIDER_SIGNATURE_HEADERS.payments);
  if (isFailure(value)) return value;
  const header = parseHeader(value);
  if (isFailure(header)) return header;
  const stale = checkTimestamp(header.timestamp, nowMs, config.toleranceSeconds);
  if (stale) return stale;
  const digest = hmacDigest('sha256', config.secret, [header.timestamp, '.', rawBody]);
  return verdict(header.signatures.some((signature) => encodedDigestMatches(signature, digest, 'hex')));
};
