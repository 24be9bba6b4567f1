import { encodedDigestMatches, hmacDigest } from './digest.js';
import { singleHeader } from './header-map.js';
import { invalid, isFailure, verdict } from './signature-result.js';
import { checkTimestamp } from './timestamp.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';
import { PROVIDER_SIGNATURE_HEADERS } from './signature-header.js';

const VERSION_PREFIX = 'v0=';

/** `X-Slack-Signature: v0=<hex>` = HMAC-SHA256(secret, `v0:<X-Slack-Request-Timestamp>:body`). */
export const verifyChat: Verifier<ProviderVerificationConfig<'chat'>> = (config, { headers, rawBody, nowMs }) => {
  const signature = singleHeader(headers, PROVIDER_SIGNATURE_HEADERS.chat);
  if (isFailure(signature)) return signature;
  const timestamp = singleHeader(headers, 'x-slack-request-timestamp');
  if (isFailure(timestamp)) return timestamp;
  if (!signature.startsWith(VERSION_PREFIX)) return invalid('malformed_header');
  const stale = checkTimestamp(timestamp, nowMs, config.toleranceSeconds);
  if (stale) return stale;
  const digest = hmacDigest('sha256', config.secret, ['v0:', timestamp, ':', rawBody]);
  return verdict(encodedDigestMatches(signature.slice(VERSION_PREFIX.length), digest, 'hex'));
};
