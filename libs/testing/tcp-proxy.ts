import { createServer, connect, type Server, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a real server, which a test takes down and brings back. */
export interface TcpProxy {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly port: number;
  /** Client connections open through the proxy now. */
  openConnections(): number;
  /** Stops listening and drops every open connection: the server looks gone. */
  goDown(): Promise<void>;
  /** Listens again on the same port. */
  comeUp(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Forwards every connection to `host:port` byte for byte. Lets a test make a shared service (RabbitMQ,
 * NATS, Redis, Kafka) unreachable for the relay alone, without stopping it for anyone else.
 */
export async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((incoming) => {
    track(incoming);
    clients.add(incoming);
    incoming.on('close', () => clients.delete(incoming));
    const outgoing = connect({ host, port });
    track(outgoing);
    incoming.pipe(outgoing).pipe(incoming);
    incoming.on('close', () => outgoing.destroy());
    outgoing.on('close', () => incoming.destroy());
  });
  const listen = (at: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(at, '127.0.0.1', () => resolve()));
  await listen(0);
  const listenPort = (server.address() as { port: number }).port;
  const goDown = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    address: `127.0.0.1:${listenPort}`,
    port: listenPort,
    openConnections: () => clients.size,
    goDown,
    comeUp: () => listen(listenPort),
    close: () => (server.listening ? goDown() : Promise.resolve()),
  };
}
