import { Worker, type MessagePort } from 'node:worker_threads';

/** A message that answers the request posted with the same id. */
export interface Answer {
  id: number;
}

export interface PortRequestsOptions<A extends Answer> {
  /** Picks the answers out of whatever else arrives on the port. */
  isAnswer(message: unknown): message is A;
  /** What the requests pending when the port closes are rejected with, and any made after. */
  closedError(): Error;
}

export interface PortRequests<A extends Answer> {
  /** Posts `message(id)` and resolves with the answer carrying that id. */
  request(message: (id: number) => unknown, transfer?: readonly ArrayBuffer[]): Promise<A>;
}

/**
 * Requests over a MessagePort, or to a Worker from the thread that started it, each answered by id. Once
 * the port closes (the worker exits) no answer can come, so the requests still pending are rejected then
 * rather than left to hang.
 */
export function portRequests<A extends Answer>(port: MessagePort | Worker, options: PortRequestsOptions<A>): PortRequests<A> {
  const pending = new Map<number, { resolve(answer: A): void; reject(error: Error): void }>();
  let nextId = 0;
  let closed = false;

  port.on('message', (message: unknown) => {
    if (!options.isAnswer(message)) return;
    pending.get(message.id)?.resolve(message);
    pending.delete(message.id);
  });
  const close = () => {
    closed = true;
    for (const { reject } of pending.values()) reject(options.closedError());
    pending.clear();
  };
  if (port instanceof Worker) port.once('exit', close);
  else port.once('close', close);

  return {
    request(message, transfer = []) {
      if (closed) return Promise.reject(options.closedError());
      const id = nextId++;
      return new Promise<A>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        port.postMessage(message(id), transfer);
      });
    },
  };
}
