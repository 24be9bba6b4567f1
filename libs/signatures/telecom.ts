import { encodedDigestMatches, hmacDigest, sha256Digest } from './digest.js';
import { singleHeader } from './header-map.js';
import { invalid, isFailure, VALID } from './signature-result.js';
import type { ProviderVerificationConfig } from './verification-config.js';
import type { Verifier } from './verifier.js';
import { PROVIDER_SIGNATURE_HEADERS } from './signature-header.js';

const BODY_HASH_PARAM = 'bodySHA256';

/**
 * Form parameters as the provider signs them: names sorted, each followed by its value; a repeated
 * name contributes each distinct value, sorted (the provider's own getExpectedTwilioSignature).
 */
function signedFormParams(body: Buffer): string {
  const params = new URLSearchParams(body.toString('utf8'));
  return [...new Set(params.keys())]
    .sort()
    .map((name) => [...new Set(params.getAll(name))].sort().map((value) => name + value).join(''))
    .join('');
}

/**
 * The provider signs the URL configured in its console, which may or may not spell out the port;
 * like its own validator, accept the URL as given and with the port removed or the default added.
 */
function urlVariants(url: string): string[] {
  const match = /^(https?):\/\/([^/?#]*@)?(\[[^\]]*\]|[^/?#:]*)(:\d*)?(.*)$/is.exec(url);
  if (!match) return [url];
  const [, scheme, userInfo = '', host, port, rest] = match;
  const base = `${scheme}://${userInfo}${host}`;
  const defaultPort = scheme.toLowerCase() === 'https' ? ':443' : ':80';
  return [url, port ? base + rest : base + defaultPort + rest];
}

/**
 * `X-Twilio-Signature: <base64>` = HMAC-SHA1(secret, URL + signed form params). A JSON body is not
 * signed itself: the URL carries `bodySHA256=<hex sha256(body)>`, the signature covers the URL alone,
 * and the hash must match the body.
 */
export const verifyTelecom: Verifier<ProviderVerificationConfig<'telecom'>> = ({ secret }, { headers, rawBody, publicUrl }) => {
  const signature = singleHeader(headers, PROVIDER_SIGNATURE_HEADERS.telecom);
  if (isFailure(signature)) return signature;
  let bodyHash: string | null;
  try {
    bodyHash = new URL(publicUrl).searchParams.get(BODY_HASH_PARAM);
  } catch {
    return invalid('malformed_url');
  }
  const params = bodyHash === null ? signedFormParams(rawBody) : '';
  const signed = urlVariants(publicUrl).some((url) =>
    encodedDigestMatches(signature, hmacDigest('sha1', secret, [url, params]), 'base64'),
  );
  if (!signed) return invalid('mismatch');
  if (bodyHash !== null && !encodedDigestMatches(bodyHash, sha256Digest(rawBody), 'hex')) return invalid('body_hash_mismatch');
  return VALID;
};
