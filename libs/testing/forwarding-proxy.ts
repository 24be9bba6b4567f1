import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A TLS-terminating proxy as the relay sees it: what it adds to each request it forwards. */
export interface ProxyIdentity {
  /** Appended to `X-Forwarded-Proto`, as the proxy saw the client connect (e.g. `https`). */
  proto: string;
  /** Appended to `X-Forwarded-Host`: the public host the client called. */
  host: string;
}

export interface ForwardingProxy {
  url: string;
  close(): Promise<void>;
}

function appended(headers: IncomingHttpHeaders, name: string, value: string): string {
  const sent = headers[name];
  return sent === undefined ? value : `${[sent].flat().join(', ')}, ${value}`;
}

/**
 * A real reverse proxy on 127.0.0.1 in front of `target`: forwards every request as it came (method,
 * path, headers, body) and appends its own hop to X-Forwarded-For/-Proto/-Host, as nginx's
 * `$proxy_add_x_forwarded_for` style does, so a client's own forwarded headers stay in front of it.
 */
export async function startForwardingProxy(target: string, identity: ProxyIdentity): Promise<ForwardingProxy> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    const headers = {
      ...incoming.headers,
      host: upstream.host,
      'x-forwarded-for': appended(incoming.headers, 'x-forwarded-for', incoming.socket.remoteAddress ?? ''),
      'x-forwarded-proto': appended(incoming.headers, 'x-forwarded-proto', identity.proto),
      'x-forwarded-host': appended(incoming.headers, 'x-forwarded-host', identity.host),
    };
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
