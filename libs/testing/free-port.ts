import fs from 'node:fs';
import net from 'node:net';

/** Where ports are picked when the kernel's ephemeral range cannot be read (not Linux): below Linux's default one. */
const FALLBACK_EPHEMERAL_LOW = 32_768;
/** The lowest port picked: above the well-known and most registered services' ports. */
const LOWEST_PICKED = 10_000;
const ATTEMPTS = 50;

/** The first port the kernel hands out to outgoing connections and to `listen(0)`. */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PICKED ? low : FALLBACK_EPHEMERAL_LOW;
  } catch {
    return FALLBACK_EPHEMERAL_LOW;
  }
}

/** Whether `port` could be bound on 127.0.0.1 just now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port nothing listens on now, for a process that binds it later (a Kafka node, a restarted
 * process, an unreachable broker). Picked below the ephemeral range: a port from `listen(0)` may be
 * handed to another process's outgoing connection before ours binds it (a Kafka node's own connections to
 * its peers took one once), and the kernel never hands out a port below that range.
 */
export async function unusedLoopbackPort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = LOWEST_PICKED + Math.floor(Math.random() * (low - LOWEST_PICKED));
    if (await bindable(port)) return port;
  }
  throw new Error(`No port between ${LOWEST_PICKED} and ${low} could be bound on 127.0.0.1 in ${ATTEMPTS} tries`);
}
