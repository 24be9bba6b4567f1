import ipaddr from 'ipaddr.js';
import { matchesAny, parseClientAddress, parseIpRule, type IpRule } from '../net/ip-rules.js';

/**
 * Which resolved addresses a delivery may connect to (SSRF guard). Cloud metadata and link-local
 * addresses are refused always; with `blockPrivateDestinations`, everything that is not public
 * unicast is refused too (loopback, RFC 1918, unique-local, CGNAT, unspecified, reserved...).
 */

/** Always refused: instance metadata services and the link-local ranges most of them live in. */
const METADATA_RANGES: readonly IpRule[] = [
  '169.254.0.0/16', // IPv4 link-local: AWS/GCP/Azure/DigitalOcean/Oracle/OpenStack 169.254.169.254, ECS 169.254.170.2, Tencent 169.254.0.23
  'fe80::/10', // IPv6 link-local
  '100.100.100.200/32', // Alibaba Cloud
  'fd00:ec2::/32', // AWS Nitro IPv6 instance services (IMDS fd00:ec2::254, DNS ::253, NTP ::123)
  '192.0.0.192/32', // Oracle Cloud Classic
].map((text) => parseIpRule(text)!);

export type AddressRefusal = 'metadata' | 'private' | 'unparseable';

export interface AddressPolicy {
  blockPrivateDestinations: boolean;
}

/** Why the address is refused, or undefined when a delivery may connect to it. */
export function refusalFor(addressText: string, policy: AddressPolicy): AddressRefusal | undefined {
  // process() turns ::ffff:a.b.c.d into the IPv4 address it carries.
  const address = parseClientAddress(addressText);
  if (!address) return 'unparseable';
  const candidates = [address, ...embeddedIPv4(address)];
  if (candidates.some((candidate) => matchesAny(candidate, METADATA_RANGES))) return 'metadata';
  if (policy.blockPrivateDestinations && address.range() !== 'unicast') return 'private';
  return undefined;
}

/** The IPv4 address a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address leads to. */
function embeddedIPv4(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4[] {
  if (address.kind() !== 'ipv6') return [];
  const ipv6 = address as ipaddr.IPv6;
  const range = ipv6.range();
  if (range === 'rfc6052') return [ipv4FromWords(ipv6.parts[6]!, ipv6.parts[7]!)];
  if (range === '6to4') return [ipv4FromWords(ipv6.parts[1]!, ipv6.parts[2]!)];
  return [];
}

function ipv4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

const REFUSAL_REASONS: Record<AddressRefusal, string> = {
  metadata: 'cloud metadata and link-local addresses are never delivered to',
  private: 'private and loopback destinations are blocked',
  unparseable: 'the resolver returned something that is not an IP address',
};

/** Raised at connect time; the sender reports it as `errorKind: 'refused_address'`. */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_RELAY_REFUSED_ADDRESS';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly refusal: AddressRefusal,
  ) {
    // The address stays out of the message, which the destination's owner reads (DESIGN 7, Hardening).
    super(`Refused to connect to ${host}: ${REFUSAL_REASONS[refusal]}`);
    this.name = 'RefusedAddressError';
  }
}
