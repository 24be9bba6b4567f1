import { encodedDigestMatches, hmacDigest } from './digest.js';
import { singleHeader } from './header-map.js';
import { invalid, isFailure, verdict } from './signature-result.js';
import type { HmacVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';

/** A signature of the whole body in one header; `hmac` is this rule as configured, other types are presets of it. */
export type BodyHmacRule = Omit<HmacVerificationConfig, 'type'>;

export const verifyBodyHmac: Verifier<BodyHmacRule> = (rule, { headers, rawBody }) => {
  const value = singleHeader(headers, rule.header.toLowerCase());
  if (isFailure(value)) return value;
  const prefix = rule.prefix ?? '';
  if (!value.startsWith(prefix)) return invalid('malformed_header');
  const digest = hmacDigest(rule.algorithm, rule.secret, [rawBody]);
  return verdict(encodedDigestMatches(value.slice(prefix.length), digest, rule.encoding));
};
