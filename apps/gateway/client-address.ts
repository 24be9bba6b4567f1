/**
 * The client's address: the socket peer, or, behind `trustedProxies` proxies, the address that many
 * hops back in `X-Forwarded-For` (each proxy appends the peer it saw, so only the last N are trusted).
 */
export function clientAddress(socketAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: number): string | undefined {
  if (trustedProxies === 0 || forwardedFor === undefined) return socketAddress;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean);
  if (hops.length === 0) return socketAddress;
  return hops[Math.max(0, hops.length - trustedProxies)];
}
