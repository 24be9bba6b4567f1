import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { PrivateDestinationError, ValidationError } from '../errors/errors.js';
import { within } from '../time/within.js';
import { refusalFor, type AddressPolicy, type AddressRefusal } from './address-policy.js';
import type { ResolveHost } from './guarded-connector.js';

/**
 * Whether `target` (a URL, or `host:port` as a Kafka broker is written) may be delivered to, judged when it
 * is saved: throws PrivateDestinationError naming `field` when its host is, or resolves to, an address
 * the address policy refuses. The connect-time guard (guarded-connector.ts) judges every connection again.
 */
export type CheckTarget = (target: string, field: string) => Promise<void>;

export interface TargetCheckOptions extends AddressPolicy {
  /** `dns.promises.lookup` when absent. */
  resolveHost?: ResolveHost;
  /** A lookup that takes longer is given up, as one that fails (default 2 s). */
  resolveTimeoutMs?: number;
  /** The relay's own Kafka brokers (`KAFKA_BROKERS`): no destination may publish into its pipeline. */
  ownBrokers?: string[];
}

const DEFAULT_RESOLVE_TIMEOUT_MS = 2_000;

const REFUSALS: Record<AddressRefusal, string> = {
  private: 'a private, loopback or otherwise non-public address; such destinations are refused while RELAY_BLOCK_PRIVATE_DESTINATIONS is true',
  metadata: 'a cloud metadata or link-local address, which is refused whatever RELAY_BLOCK_PRIVATE_DESTINATIONS says',
  unparseable: 'something the resolver gave that is not an IP address',
};

/** The host of a URL or of `host:port`, without the brackets of an IPv6 literal. */
function hostOf(target: string): string {
  const url = new URL(target.includes('://') ? target : `tcp://${target}`);
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export function createTargetCheck(options: TargetCheckOptions): CheckTarget {
  const policy: AddressPolicy = { blockPrivateDestinations: options.blockPrivateDestinations };
  const resolveHost: ResolveHost = options.resolveHost ?? dns.lookup;
  const timeoutMs = options.resolveTimeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS;

  /**
   * A name that does not resolve now is accepted: DNS may be down for a moment, and the connect-time
   * guard refuses whatever it resolves to later (docs/decisions, "Private destinations refused by default").
   */
  async function addressesOf(host: string): Promise<string[]> {
    if (isIP(host)) return [host];
    try {
      const addresses = await within(timeoutMs, resolveHost(host, { all: true, family: 0 }), `Resolving ${host}`);
      return addresses.map(({ address }) => address);
    } catch {
      return [];
    }
  }

  const ownBrokers = new Set((options.ownBrokers ?? []).map((broker) => broker.trim().toLowerCase()));

  return async (target, field) => {
    if (ownBrokers.has(target.trim().toLowerCase())) {
      throw new ValidationError(`${field}: must not name the relay's own Kafka brokers`, [{ field, message: "must not name the relay's own Kafka brokers" }]);
    }
    let host: string;
    try {
      host = hostOf(target);
    } catch {
      return; // Not a URL: the schema that validates the field says so.
    }
    for (const address of await addressesOf(host)) {
      const refusal = refusalFor(address, policy);
      if (!refusal) continue;
      // The host as given, never the address it resolved to: that would map the operator's network.
      const reason = `${host} is or resolves to ${REFUSALS[refusal]}`;
      throw new PrivateDestinationError(`${field}: ${reason}`, [{ field, message: reason }]);
    }
  };
}
