import http from 'node:http';
import net from 'node:net';
import type { HostileRequest } from './hostile-requests.js';

export interface HostileAnswer {
  /** 0 when the server closed the connection without an answer. */
  status: number;
  contentType: string;
  text: string;
}

const TIMEOUT_MS = 15_000;

/** The body of a chunked answer (`<hex size>\r\n<data>\r\n` ... `0\r\n\r\n`); sizes count bytes. */
function unchunked(framed: string): string {
  const bytes = Buffer.from(framed, 'utf8');
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    const size = lineEnd < 0 ? 0 : parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!size) return Buffer.concat(parts).toString('utf8');
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/**
 * Sends hostile requests to one server: well-formed HTTP over one keep-alive connection (node:http), and
 * raw requests byte for byte on a connection of their own, each read to its end.
 */
export function hostileClient(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  function viaNode(request: HostileRequest): Promise<HostileAnswer> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of request.headers) headers[name] = value;
      if (request.body) headers['content-length'] = String(request.body.length);
      const outgoing = http.request({ host: hostname, port, method: request.method, path: request.path, headers, agent, timeout: TIMEOUT_MS }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          resolve({ status: answer.statusCode ?? 0, contentType: String(answer.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }),
        );
        answer.on('error', reject);
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      outgoing.on('error', reject);
      outgoing.end(request.body);
    });
  }

  function viaSocket(request: HostileRequest): Promise<HostileAnswer> {
    return new Promise((resolve, reject) => {
      const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${hostname}:${port}`, 'connection: close'];
      for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
      if (request.body && !request.headers.some(([name]) => name === 'content-length')) lines.push(`content-length: ${request.body.length}`);
      const socket = net.connect(Number(port), hostname);
      const chunks: Buffer[] = [];
      socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      // A server may close before reading everything sent; what it answered is still read.
      socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
      socket.on('close', () => {
        const response = Buffer.concat(chunks).toString('utf8');
        const end = response.indexOf('\r\n\r\n');
        if (end < 0) return resolve({ status: 0, contentType: '', text: response });
        const head = response.slice(0, end).split('\r\n');
        const contentType = head.find((line) => /^content-type:/i.test(line))?.replace(/^content-type:\s*/i, '') ?? '';
        const chunked = head.some((line) => /^transfer-encoding:\s*chunked/i.test(line));
        const rest = response.slice(end + 4);
        resolve({ status: Number(head[0]?.split(' ')[1] ?? 0), contentType, text: chunked ? unchunked(rest) : rest });
      });
      socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), request.body ?? Buffer.alloc(0)]));
    });
  }

  return {
    send: (request: HostileRequest) => (request.raw ? viaSocket(request) : viaNode(request)),
    close: () => agent.destroy(),
  };
}
