/**
 * The client's address: the socket peer, or, behind `trustedProxies` proxies, the address that many
 * hops back in `X-Forwarded-For` (each proxy appends the peer it saw, so only the last N are trusted).
 */
export function clientAddress(socketAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedProxies: number): string | undefined {
  if (trustedProxies === 0 || forwardedFor === undefined) return socketAddress;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => withoutPort(hop.trim()))
    .filter(Boolean);
  if (hops.length === 0) return socketAddress;
  return hops[Math.max(0, hops.length - trustedProxies)];
}

/** Some proxies write `1.2.3.4:5678` or `[2001:db8::1]:443`; the filter compares addresses only. */
function withoutPort(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1]!;
  const ipv4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return ipv4WithPort ? ipv4WithPort[1]! : hop;
}
