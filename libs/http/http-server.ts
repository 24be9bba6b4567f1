import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';

export interface HttpServerOptions {
  port: number;
  host: string;
  /** Larger header sections are refused with 431 before any handler runs. */
  maxHeaderSize?: number;
}

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  /** Stops accepting, lets in-flight requests finish, then closes idle keep-alive connections. */
  close(): Promise<void>;
}

const STATUS_FOR_CLIENT_ERROR: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE'],
  // A method Node's parser does not know at all (known ones it does not serve are Koa's 405).
  HPE_INVALID_METHOD: [405, 'Method Not Allowed', 'METHOD_NOT_ALLOWED'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'REQUEST_TIMEOUT'],
};

/**
 * Connections the kernel queues for `accept` (it caps this at `net.core.somaxconn`, 4096 on current
 * Linux). Node's default, 511, overflowed under a burst of new connections (providers often open one per
 * webhook): the kernel then drops the SYN and the sender's retry comes 1 s, then 3 s, later
 * (docs/decisions/0040-listen-backlog.md).
 */
const LISTEN_BACKLOG = 4096;

const rejection = (title: string, code: string) =>
  JSON.stringify({ error: title, message: `The HTTP request was rejected: ${title.toLowerCase()}`, code });

/** Malformed HTTP never reaches Koa; answer it in the same `{error, message, code}` envelope. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, title, code] = STATUS_FOR_CLIENT_ERROR[error.code ?? ''] ?? [400, 'Bad Request', 'MALFORMED_REQUEST'];
  const body = rejection(title, code);
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * An `Expect` other than `100-continue` (which node:http answers itself) cannot be met: 417, in the
 * envelope, where node:http would answer with an empty body. The body sent after it is not read.
 */
function answerUnmetExpectation(_request: http.IncomingMessage, response: http.ServerResponse): void {
  const body = rejection('Expectation Failed', 'EXPECTATION_FAILED');
  response.writeHead(417, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  response.end(body);
}

export async function startHttpServer(app: Koa, options: HttpServerOptions): Promise<RunningServer> {
  let closing = false;
  const handle = app.callback();
  const server = http.createServer({ maxHeaderSize: options.maxHeaderSize ?? 16 * 1024, keepAliveTimeout: 65_000 }, (request, response) => {
    // Once closing, every answer ends its keep-alive connection, so a busy client cannot keep it open.
    if (closing) response.setHeader('Connection', 'close');
    return handle(request, response);
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return {
    server,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
