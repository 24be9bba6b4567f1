import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { refusalFor, RefusedAddressError, type AddressPolicy } from './address-policy.js';

/** The resolver port: `dns.promises.lookup` with `{all: true}` in production, a fixed table in tests. */
export type ResolveHost = (hostname: string, options: { all: true; family: number }) => Promise<LookupAddress[]>;

export interface GuardedConnectorOptions extends AddressPolicy {
  resolveHost?: ResolveHost;
  /** undici's default (10 s) when absent. */
  connectTimeoutMs?: number;
}

/**
 * An undici connector that checks every address before a socket is opened to it. Hostnames are
 * checked inside the socket's own DNS lookup, so the address judged is the address connected to
 * (no gap for DNS rebinding); IP literals skip that lookup in node:net, so they are judged here first.
 * A host with any refused address is refused as a whole.
 */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const policy: AddressPolicy = { blockPrivateDestinations: options.blockPrivateDestinations };
  const connect = buildConnector({
    lookup: guardedLookup(policy, options.resolveHost ?? dns.lookup),
    timeout: options.connectTimeoutMs,
  });
  return (connectOptions, callback) => {
    const { hostname } = connectOptions;
    const refusal = isIP(hostname) ? refusalFor(hostname, policy) : undefined;
    if (refusal) {
      process.nextTick(() => callback(new RefusedAddressError(hostname, hostname, refusal), null));
      return;
    }
    connect(connectOptions, callback);
  };
}

function guardedLookup(policy: AddressPolicy, resolveHost: ResolveHost): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolveHost(hostname, { all: true, family: options.family === 4 || options.family === 6 ? options.family : 0 }).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`No address found for ${hostname}`), { code: 'ENOTFOUND', hostname }), '');
          return;
        }
        for (const { address } of addresses) {
          const refusal = refusalFor(address, policy);
          if (refusal) return callback(new RefusedAddressError(hostname, address, refusal), '');
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
