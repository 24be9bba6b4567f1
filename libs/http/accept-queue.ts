import fs from 'node:fs';

const LISTEN_STATE = '0A';
const TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];

/**
 * Connections the kernel has completed on the listening socket at `port` and this process has not accepted
 * yet: for a socket in LISTEN state, `/proc/net/tcp`'s `rx_queue` is its accept queue. Node since 20
 * (libuv 1.45) accepts one connection a turn of its event loop, so while the thread is busy a burst of new
 * connections waits there, out of sight of any timing the relay itself takes (docs/decisions/0042-one-accept-a-turn.md). Undefined where the tables cannot be read (not Linux).
 */
export function acceptQueueLength(port: number): number | undefined {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  // One match over each table: they list every connection too, a thousand or more under load.
  const listening = new RegExp(`^\\s*\\d+: [0-9A-F]+:${portHex} [0-9A-F]+:[0-9A-F]+ ${LISTEN_STATE} [0-9A-F]+:([0-9A-F]+)`, 'gm');
  let length = 0;
  for (const table of TABLES) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      return undefined;
    }
    for (const [, queued] of text.matchAll(listening)) length += Number.parseInt(queued!, 16);
  }
  return length;
}
