/**
 * Which headers may travel from a provider's request (or a destination's configured headers) onto a
 * delivery request. The relay is not a transparent proxy: it makes a new request of its own, so
 * anything describing the provider->relay hop stays behind.
 */

/** RFC 9110 7.6.1 hop-by-hop headers, plus `proxy-*` (proxy credentials and proxy-connection). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Message framing is the HTTP client's job for the new request; `expect` is refused by undici. */
const FRAMING = new Set(['host', 'content-length', 'expect']);

/**
 * Never forwarded from the provider:
 * - `authorization`, `cookie`: the provider's credentials for the relay, not for the destination.
 * - `forwarded`, `x-forwarded-*`, `x-real-ip`, `via`: they describe the hop into the relay (often written
 *   by the relay's own load balancer, or spoofed by the sender); a destination that trusts them for IP
 *   allow-lists or scheme detection would be misled. Towards the destination the relay is the client.
 * - `x-relay-*`: the relay's own headers; a sender must not be able to pre-set them (for instance
 *   `X-Relay-Signature-Valid`, which the relay writes only when verification failed).
 * - `accept-encoding`: the relay reads the response, not the provider, and records it as text.
 * Standard Webhooks `webhook-*` headers are not listed: the relay's own signature layer replaces them.
 */
const PROVIDER_ONLY = new Set(['authorization', 'cookie', 'forwarded', 'x-real-ip', 'via', 'accept-encoding']);
const PROVIDER_ONLY_PREFIXES = ['proxy-', 'x-forwarded-', 'x-relay-'];

function isFramingOrHopByHop(name: string, connectionTokens: ReadonlySet<string>): boolean {
  return HOP_BY_HOP.has(name) || FRAMING.has(name) || name.startsWith('proxy-') || connectionTokens.has(name);
}

/** Names listed in a `Connection` header are hop-by-hop for that message too. */
function connectionTokensOf(headers: Record<string, string>): Set<string> {
  const value = Object.entries(headers).find(([name]) => name.toLowerCase() === 'connection')?.[1] ?? '';
  return new Set(value.split(',').map((token) => token.trim().toLowerCase()).filter(Boolean));
}

/** The provider headers that are forwarded, names as received (lower-cased by the gateway). */
export function forwardableProviderHeaders(headers: Record<string, string>): Array<[string, string]> {
  const connectionTokens = connectionTokensOf(headers);
  return Object.entries(headers).filter(([name]) => {
    const lower = name.toLowerCase();
    return (
      !isFramingOrHopByHop(lower, connectionTokens) &&
      !PROVIDER_ONLY.has(lower) &&
      !PROVIDER_ONLY_PREFIXES.some((prefix) => lower.startsWith(prefix))
    );
  });
}

/** A destination's configured headers minus the ones that would corrupt the request's framing. */
export function applicableDestinationHeaders(headers: Record<string, string>): Array<[string, string]> {
  const none = new Set<string>();
  return Object.entries(headers).filter(([name]) => !isFramingOrHopByHop(name.toLowerCase(), none));
}
