import net from 'node:net';

/** What the origin is read from: a Koa context gives all of it. */
export interface OriginSource {
  /** `https` when the socket itself is TLS, else `http`. */
  protocol: string;
  get(header: string): string;
  socket: { localAddress?: string; localPort?: number };
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The value a trusted proxy wrote in a list header (`X-Forwarded-Proto`, `X-Forwarded-Host`): with N
 * proxies trusted, the N-th from the end, as for X-Forwarded-For (a proxy that appends puts its value
 * after whatever the client sent); a proxy that overwrites leaves one value, which is taken.
 */
function trustedValue(value: string, trustProxy: number): string | undefined {
  const hops = value.split(',').map((hop) => hop.trim()).filter(Boolean);
  return hops.length === 0 ? undefined : hops[Math.max(0, hops.length - trustProxy)];
}

/**
 * `scheme://host[:port]` as the caller reached the relay: the request's Host over the socket's scheme,
 * or with `trustProxy` > 0 what the proxies say in `X-Forwarded-Proto` / `X-Forwarded-Host`. A value that
 * is no scheme or host (garbage sent by a client) gives way to the next source, and a request with no
 * usable Host at all is named by the address it arrived at.
 */
export function requestOrigin(request: OriginSource, trustProxy: number): string {
  const forwardedProto = trustProxy > 0 ? trustedValue(request.get('x-forwarded-proto'), trustProxy)?.toLowerCase() : undefined;
  const scheme = forwardedProto === 'http' || forwardedProto === 'https' ? forwardedProto : request.protocol;
  const forwardedHost = trustProxy > 0 ? trustedValue(request.get('x-forwarded-host'), trustProxy) : undefined;
  const host = [forwardedHost, request.get('host')].find((candidate) => candidate !== undefined && HOST.test(candidate));
  if (host !== undefined) return `${scheme}://${host}`;
  const { localAddress = '127.0.0.1', localPort } = request.socket;
  const address = net.isIPv6(localAddress) ? `[${localAddress}]` : localAddress;
  return `${scheme}://${address}${localPort === undefined ? '' : `:${localPort}`}`;
}
