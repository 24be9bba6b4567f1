import { encodedDigestMatches, hmacDigest } from './digest.js';
import { singleHeader } from './header-map.js';
import { invalid, isFailure, verdict, type SignatureFailure } from './signature-result.js';
import { checkTimestamp } from './timestamp.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';
import { PROVIDER_SIGNATURE_HEADERS } from './signature-header.js';

const SECRET_MARKER = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The key is the base64 after `whsec_` (the marker is optional, as in the reference library). */
function decodeSecret(secret: string): Buffer | SignatureFailure {
  const encoded = secret.startsWith(SECRET_MARKER) ? secret.slice(SECRET_MARKER.length) : secret;
  return BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : invalid('malformed_secret');
}

/** `webhook-signature` is space-separated `<version>,<base64>`; only v1 (HMAC-SHA256) is understood. */
function v1Signatures(header: string): string[] {
  return header
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version, signature]) => version === 'v1' && signature !== undefined && signature !== '')
    .map(([, signature]) => signature);
}

/** Standard Webhooks: HMAC-SHA256(decoded secret, `id.timestamp.body`). */
export const verifyStandard: Verifier<ProviderVerificationConfig<'standard'>> = (config, { headers, rawBody, nowMs }) => {
  const key = decodeSecret(config.secret);
  if (isFailure(key)) return key;
  const id = singleHeader(headers, 'webhook-id');
  if (isFailure(id)) return id;
  const timestamp = singleHeader(headers, 'webhook-timestamp');
  if (isFailure(timestamp)) return timestamp;
  const signatureHeader = singleHeader(headers, PROVIDER_SIGNATURE_HEADERS.standard);
  if (isFailure(signatureHeader)) return signatureHeader;
  const signatures = v1Signatures(signatureHeader);
  if (signatures.length === 0) return invalid('malformed_header');
  const stale = checkTimestamp(timestamp, nowMs, config.toleranceSeconds);
  if (stale) return stale;
  const digest = hmacDigest('sha256', key, [id, '.', timestamp, '.', rawBody]);
  return verdict(signatures.some((signature) => encodedDigestMatches(signature, digest, 'base64')));
};
