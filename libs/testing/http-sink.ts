import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A real HTTP receiver on 127.0.0.1 for tests: it records every request and answers as the test
 * programs it (status, Retry-After, delay, hang, connection reset), and can go down and come back
 * on the same port so "destination down" is a real refused connection.
 */

export interface RecordedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  /** Lower-cased by node:http. */
  headers: IncomingHttpHeaders;
  body: Buffer;
  receivedAt: number;
}

export type SinkResponse =
  | {
      kind: 'respond';
      status: number;
      headers?: Record<string, string>;
      body?: string | Buffer;
      delayMs?: number;
      /** Held until this settles (then `delayMs`): answers a test wants to arrive together wait for one signal. */
      after?: Promise<unknown>;
    }
  /** Never answers; the socket stays open until the client gives up or the sink closes. */
  | { kind: 'hang' }
  /** Destroys the socket after reading the request: the client sees a reset / closed connection. */
  | { kind: 'reset' }
  /** Sends the status line, headers and a first part of the body, then never the rest. */
  | { kind: 'stall-body'; status: number };

/**
 * A function of the request and its 0-based index, or a script: one entry per request, the last
 * repeating. Indexes count from the moment the behaviour was set.
 */
export type SinkBehaviour = ((request: RecordedRequest, index: number) => SinkResponse) | readonly SinkResponse[];

export function respond(status: number, options: Omit<Extract<SinkResponse, { kind: 'respond' }>, 'kind' | 'status'> = {}): SinkResponse {
  return { kind: 'respond', status, ...options };
}

export function hang(): SinkResponse {
  return { kind: 'hang' };
}

export function resetConnection(): SinkResponse {
  return { kind: 'reset' };
}

export function stallBody(status: number): SinkResponse {
  return { kind: 'stall-body', status };
}

export interface HttpSink {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  setBehaviour(behaviour: SinkBehaviour): void;
  /** Resolves with all requests once at least `count` arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<readonly RecordedRequest[]>;
  /** Stops listening and drops open connections: new connections are refused. */
  goDown(): Promise<void>;
  /** Listens again on the same port. */
  comeUp(): Promise<void>;
  close(): Promise<void>;
}

export async function startHttpSink(behaviour: SinkBehaviour = [respond(200, { body: 'ok' })]): Promise<HttpSink> {
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const pendingTimers = new Set<NodeJS.Timeout>();
  let current = behaviour;
  let currentSince = 0;

  const server = createServer((req, res) => {
    void readBody(req).then(
      (body) => {
        const recorded: RecordedRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
          receivedAt: Date.now(),
        };
        const index = requests.push(recorded) - 1;
        for (const wake of waiters) wake();
        answer(pick(current, recorded, index - currentSince), req, res);
      },
      () => req.socket.destroy(),
    );
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function answer(response: SinkResponse, req: IncomingMessage, res: ServerResponse): void {
    if (response.kind === 'hang') return;
    if (response.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (response.kind === 'stall-body') {
      res.writeHead(response.status, { 'content-length': '1000' });
      res.write('the first part of the body, and no more');
      return;
    }
    const send = (): void => {
      res.writeHead(response.status, response.headers);
      res.end(response.body);
    };
    const sendInTime = (): void => {
      if (!response.delayMs) return send();
      const timer = setTimeout(() => {
        pendingTimers.delete(timer);
        send();
      }, response.delayMs);
      pendingTimers.add(timer);
    };
    if (!response.after) return sendInTime();
    // A socket dropped meanwhile (goDown, close) is not written to.
    const sendUnlessDropped = (): void => {
      if (!res.destroyed) sendInTime();
    };
    response.after.then(sendUnlessDropped, sendUnlessDropped);
  }

  function dropConnections(): void {
    for (const timer of pendingTimers) clearTimeout(timer);
    pendingTimers.clear();
    for (const socket of sockets) socket.destroy();
  }

  const port = await listen(server, 0);

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setBehaviour(next) {
      current = next;
      currentSince = requests.length;
    },
    waitForRequests(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`http sink: expected ${count} requests within ${timeoutMs} ms, got ${requests.length}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async goDown() {
      const closed = closeServer(server);
      dropConnections();
      await closed;
    },
    async comeUp() {
      await listen(server, port);
    },
    async close() {
      if (!server.listening) return;
      const closed = closeServer(server);
      dropConnections();
      await closed;
    },
  };
}

function pick(behaviour: SinkBehaviour, request: RecordedRequest, index: number): SinkResponse {
  if (typeof behaviour === 'function') return behaviour(request, index);
  const script = behaviour as readonly SinkResponse[];
  if (script.length === 0) throw new Error('http sink: an empty script has no answer');
  return script[Math.min(index, script.length - 1)]!;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}
