import ipaddr from 'ipaddr.js';

/** One allow/deny rule: a single address or a CIDR range, IPv4 or IPv6. */
export interface IpRule {
  text: string;
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

/**
 * An IPv4-mapped IPv6 range (`::ffff:1.2.3.4`, `::ffff:10.0.0.0/104`) as the IPv4 range it names: client
 * addresses are compared as IPv4 (`parseClientAddress`), so the rule must be too or it never matches.
 */
function ipv4Form(range: IpRule['range']): IpRule['range'] {
  const [address, prefix] = range;
  if (address.kind() !== 'ipv6' || !(address as ipaddr.IPv6).isIPv4MappedAddress() || prefix < 96) return range;
  return [(address as ipaddr.IPv6).toIPv4Address(), prefix - 96];
}

/** Parses `1.2.3.4`, `10.0.0.0/8`, `::1`, `2001:db8::/32`; returns undefined when it is neither. */
export function parseIpRule(text: string): IpRule | undefined {
  const trimmed = text.trim();
  try {
    if (trimmed.includes('/')) return { text: trimmed, range: ipv4Form(ipaddr.parseCIDR(trimmed)) };
    const address = ipaddr.parse(trimmed);
    return { text: trimmed, range: ipv4Form([address, address.kind() === 'ipv4' ? 32 : 128]) };
  } catch {
    return undefined;
  }
}

export function isValidIpRule(text: string): boolean {
  return parseIpRule(text) !== undefined;
}

/** Normalizes an address as seen on a socket (`::ffff:1.2.3.4` becomes `1.2.3.4`). */
export function parseClientAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    const address = ipaddr.process(text.trim());
    return address;
  } catch {
    return undefined;
  }
}

/** True when the address falls inside any of the rules (families must match to compare). */
export function matchesAny(address: ipaddr.IPv4 | ipaddr.IPv6, rules: readonly IpRule[]): boolean {
  return rules.some(({ range }) => address.kind() === range[0].kind() && address.match(range));
}
