import { isIP } from 'node:net';

/**
 * The client's original address, found as Envoy's connection manager finds it when it does not
 * take the peer's (use_remote_address false): by its original IP detection extensions, in order,
 * the first that finds an address winning (conn_manager_utility.cc). Without any, the x-forwarded-for
 * extension with the connection manager's xff_num_trusted_hops is the one (Envoy adds it itself).
 *
 * An address read from a header has port 0, as Envoy's parseInternetAddressNoThrow gives it
 * (`%DOWNSTREAM_REMOTE_ADDRESS%` prints `1.2.3.4:0`).
 */

export interface DetectionResult {
  /** The address found, if any (an IP literal). */
  ip?: string;
  /** Whether the address may decide that the request is internal (internal_address_config). */
  trusted: boolean;
  /** Detection failed and the request is answered with this status (custom_header's reject_with_status). */
  rejectStatus?: number;
  /** XffConfig.skip_xff_append false: the peer is appended to x-forwarded-for. */
  appendXff?: boolean;
}

export interface OriginalIpDetection {
  /** `rawHeaders`: the request's headers as they came ([name, value, …]), where one sent twice is still two. */
  detect(headers: Readonly<Record<string, string | string[] | undefined>>, peerIp: string | undefined, rawHeaders?: readonly string[]): DetectionResult;
}

/** An IPv4 or IPv6 literal, as inet_pton takes it (no brackets, no port), or undefined. */
export function parseIp(text: string): string | undefined {
  return isIP(text) ? text : undefined;
}

/** A header's value as one string: several lines of it are joined with commas, as Envoy's header map joins x-forwarded-for. */
function joined(value: string | string[] | undefined): string | undefined {
  return value === undefined ? undefined : Array.isArray(value) ? value.join(',') : value;
}

/**
 * Envoy's getLastAddressFromXFF: the last address of x-forwarded-for after skipping `skip` entries
 * from its end; `single` when it is the header's only entry (the address may then be trusted).
 */
export function lastAddressFromXff(xffValue: string | string[] | undefined, skip: number): { ip?: string; single: boolean } {
  let xff = joined(xffValue);
  if (xff === undefined) return { single: false };
  for (let i = 0; i < skip; i++) {
    const comma = xff.lastIndexOf(',');
    if (comma < 0) return { single: false };
    xff = xff.slice(0, comma);
  }
  const comma = xff.lastIndexOf(',');
  const entry = comma >= 0 && comma + 1 < xff.length ? xff.slice(comma + 1) : xff;
  const ip = parseIp(entry.trim());
  return ip === undefined ? { single: false } : { ip, single: comma < 0 && skip === 0 };
}

/**
 * Envoy's getLastNonTrustedAddressFromXFF: from the right, the first entry not in a trusted range;
 * when every entry is trusted, the leftmost. An entry that is not an address ends the search with none.
 */
export function lastUntrustedFromXff(xffValue: string | string[] | undefined, trustedProxy: (ip: string) => boolean): { ip?: string; single: boolean } {
  const xff = joined(xffValue);
  if (xff === undefined) return { single: false };
  const entries = xff.split(',');
  const single = entries.length === 1;
  let last: string | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const ip = parseIp(entries[i]!.trim());
    if (ip === undefined) return { single: false };
    last = ip;
    if (!trustedProxy(ip)) return { ip, single };
  }
  return last === undefined ? { single: false } : { ip: last, single };
}
