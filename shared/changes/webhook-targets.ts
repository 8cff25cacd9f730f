/**
 * Where a webhook may point (docs/interface.md §18). A deployment sends from inside the partner's AWS account, so
 * a subscription's URL must not reach what only that account can reach (server-side request forgery): in a
 * deployment's configuration a URL must be https and must not name a private, loopback, link-local or otherwise
 * non-public address (checked when the configuration is loaded for a deploy), and every delivery checks again the
 * addresses the name resolves to at that moment and connects to the one it checked (a name that resolves to a
 * private address later, or to a public one once and a private one the next time, is refused all the same).
 * A local run may send to http and to this machine.
 */
import { BlockList, isIP } from 'node:net';

/** Addresses no deployment may send to: the non-public ranges of IPv4 and IPv6. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (instance metadata: 169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  ['fd00:ec2::', 32], // the instance metadata service's IPv6 address range
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (mapped `::ffff:a.b.c.d`, or NAT64 `64:ff9b::a.b.c.d`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (match) return match[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const high = Number.parseInt(hex[1] as string, 16);
  const low = Number.parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an IP address is one a deployment must not send to. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family !== 6) return true;
  const inner = embeddedIpv4(bare);
  if (inner !== undefined) return NON_PUBLIC.check(inner, 'ipv4');
  return NON_PUBLIC.check(bare, 'ipv6');
}

/** Host names that stand for this machine or its private network whatever a resolver says. */
function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.internal') || name.endsWith('.local');
}

/** Why a deployment may not send to this URL; `undefined` when it may (the name is checked again at each delivery). */
export function deploymentUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an http(s) URL';
  }
  if (parsed.protocol !== 'https:') return 'must be an https URL in a deployment (http is allowed only locally)';
  if (parsed.username || parsed.password) return 'must not carry a user name or password';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 ? isNonPublicAddress(host) : isLocalName(host)) {
    return `must not point at a private, loopback or link-local address ('${parsed.hostname}') in a deployment`;
  }
  return undefined;
}
