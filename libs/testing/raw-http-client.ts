import net from 'node:net';

/** A response as read off the socket: status line, lower-cased headers, body text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseResponse(raw: string): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: split < 0 ? '' : raw.slice(split + 4) };
}

/**
 * Writes bytes to the server exactly as given (malformed, oversized or truncated HTTP that a client
 * library would refuse to send) and reads the answer until the server closes the connection, as it
 * does after refusing a request. The client never half-closes: a real sender waits for the answer.
 * A write the server no longer reads is not an error here: what it answered is what counts.
 */
export function sendRawHttp(port: number, request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (chunks.length === 0 && error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks).toString('utf8'))));
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    socket.write(request);
  });
}

/** Sends request headers and part of the declared body, then destroys the socket: an aborted upload. */
export function abortUpload(port: number, head: string, partialBody: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head);
      socket.write(partialBody, () => {
        // Give the server time to start reading the body before the connection dies mid-upload.
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    socket.on('error', reject);
  });
}
