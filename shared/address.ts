import { BlockList, isIP } from 'node:net';

/** Addresses as the proxy prints them (`1.2.3.4:80`, `[::1]:80`, or a pipe path) and as Envoy's API shapes them. */

export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** envoy.config.core.v3.Address for a printed address: a socket_address, or a pipe for anything else. */
export function addressJson(address: string): { socket_address: { address: string; port_value: number } } | { pipe: { path: string } } {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(address);
  return m ? { socket_address: { address: m[1]!, port_value: Number(m[2]) } } : { pipe: { path: address } };
}

/** Whether `host` (an IP literal or a name) is only reachable from this machine. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  return /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(host);
}

/**
 * An IP address masked to a prefix, as a CIDR range in the form inet_ntop prints (`10.1.2.0/24`,
 * `2001:db8::/32`); undefined for anything that is not an IP address. An IPv4 client on a
 * dual-stack socket (`::ffff:a.b.c.d`) counts as IPv4.
 */
export function maskedAddress(ip: string, v4PrefixLen: number, v6PrefixLen: number): string | undefined {
  const plain = /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? ip.slice(7) : ip;
  const v4 = ipv4Octets(plain);
  if (v4) return `${mask(v4, 8, v4PrefixLen).join('.')}/${v4PrefixLen}`;
  const v6 = ipv6Groups(plain);
  if (!v6) return undefined;
  return `${formatIpv6(mask(v6, 16, v6PrefixLen))}/${v6PrefixLen}`;
}

function ipv4Octets(ip: string): number[] | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

/** An IPv6 address's eight 16-bit groups (a trailing dotted quad allowed), or undefined. */
export function ipv6Groups(ip: string): number[] | undefined {
  const halves = ip.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    for (const part of s.split(':')) {
      const v4 = part.includes('.') ? ipv4Octets(part) : undefined;
      if (v4) out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      else if (/^[0-9a-f]{1,4}$/i.test(part)) out.push(parseInt(part, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** Units of `bits` each, with every bit past the first `prefixLen` cleared. */
function mask(units: number[], bits: number, prefixLen: number): number[] {
  return units.map((u, i) => {
    const keep = Math.max(0, Math.min(bits, prefixLen - i * bits));
    return keep === 0 ? 0 : u & (((1 << keep) - 1) << (bits - keep));
  });
}

/** RFC 5952: lower-case hex, the longest run of two or more zero groups (the first of equals) as `::`. */
export function formatIpv6(groups: number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/**
 * A CidrRange (`address_prefix`, `prefix_len`; a missing length is the whole address) as a test
 * of an IP address; an IPv4 client on a dual-stack socket (`::ffff:a.b.c.d`) counts as IPv4.
 */
export function compileCidrRange(range: { address_prefix?: unknown; prefix_len?: unknown }): (ip: string) => boolean {
  const address = String(range.address_prefix ?? '');
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const len = typeof range.prefix_len === 'number' ? range.prefix_len : family === 'ipv6' ? 128 : 32;
  const block = new BlockList();
  block.addSubnet(address, len, family);
  return (ip) => {
    const v = isIP(ip);
    if (v === 0) return false;
    const plain = v === 6 && ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    return block.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
  };
}
