import fs from 'node:fs';

/** What a rate's load left waiting in the kernel for the relay's `accept`: the deepest queue seen, and for how long any waited. */
export interface AcceptQueue {
  peak: number;
  waitingMs: number;
}

const LISTEN_STATE = '0A';

/**
 * Connections the kernel has completed and the relay has not yet accepted, on its listening socket at `port`:
 * for a socket in LISTEN state `/proc/net/tcp`'s `rx_queue` is the accept queue's length. Node since 20
 * (libuv 1.45) accepts one connection per turn of its event loop, so a busy thread lets connections wait
 * there while those it has accepted are answered in milliseconds (docs/DECISIONS.md, "One accept a turn").
 */
export function acceptQueueLength(port: number): number {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  // One match over the whole table: it lists every connection too, a thousand or more under load.
  const listening = new RegExp(`^\\s*\\d+: [0-9A-F]+:${portHex} [0-9A-F]+:[0-9A-F]+ ${LISTEN_STATE} [0-9A-F]+:([0-9A-F]+)`, 'gm');
  let length = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const [, queued] of fs.readFileSync(table, 'utf8').matchAll(listening)) length += Number.parseInt(queued!, 16);
  }
  return length;
}

/** Samples the accept queue of `port` every `intervalMs` until stopped. */
export function watchAcceptQueue(port: number, intervalMs = 200): { stop(): AcceptQueue } {
  const result: AcceptQueue = { peak: 0, waitingMs: 0 };
  const timer = setInterval(() => {
    const length = acceptQueueLength(port);
    result.peak = Math.max(result.peak, length);
    if (length > 0) result.waitingMs += intervalMs;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return result;
    },
  };
}
