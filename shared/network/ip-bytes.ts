import { isIP } from 'node:net';
import { formatIpv6, ipv6Groups } from '../address.js';

/**
 * IP addresses between their text and their network-order bytes, as the PROXY protocol carries
 * them: IPv4 in 4 bytes, IPv6 in 16, printed as inet_ntop(3) prints them (the longest run of two
 * or more zero groups as `::`, IPv4-mapped addresses as `::ffff:a.b.c.d`).
 */

export function ipv4Text(b: Uint8Array, at = 0): string {
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

export function ipv6Text(b: Uint8Array, at = 0): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((b[at + 2 * i]! << 8) | b[at + 2 * i + 1]!);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return `::ffff:${ipv4Text(b, at + 12)}`;
  return formatIpv6(groups);
}

/** The address's bytes (4 or 16), or undefined when it is not an IP address. */
export function ipBytes(ip: string): Uint8Array | undefined {
  const v = isIP(ip);
  if (v === 4) return Uint8Array.from(ip.split('.').map(Number));
  if (v !== 6) return undefined;
  const zone = ip.indexOf('%');
  const groups = ipv6Groups(zone >= 0 ? ip.slice(0, zone) : ip);
  if (!groups) return undefined;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Unicast, as a TCP peer must be: not the any address, not multicast, not IPv4's broadcast. */
export function isUnicast(b: Uint8Array): boolean {
  if (b.every((x) => x === 0)) return false;
  if (b.length === 4) return (b[0]! & 0xf0) !== 0xe0 && !b.every((x) => x === 255);
  return b[0] !== 0xff;
}
