import { isIP } from 'node:net';
import { isLoopback, maskedAddress } from './address.js';
import { list, obj } from './config/access.js';
import type { JsonObject } from './config/proto-json.js';
import type { Endpoint } from './network/connection-origin.js';

/**
 * Envoy's filter-chain match: of a listener's chains, the one whose `filter_chain_match` fits
 * the connection best, criterion by criterion in Envoy's order (destination port, destination IP,
 * server name, transport protocol, application protocols, direct source IP, source type, source IP,
 * source port). At each step the chains that name a matching value win; chains that do not use the
 * criterion are the fallback; chains that name other values drop out, and the next criteria choose
 * among those left only (Envoy never goes back a step). Server names match exactly first, then by
 * the longest wildcard suffix (`*.example.com`); IP ranges by the longest prefix that holds the
 * address. The addresses are those a PROXY header restored, the direct source the peer's.
 */

/** A CidrRange, masked to its prefix as Envoy's CidrRange prints it (`10.0.0.0/8`). */
export interface Cidr {
  family: 4 | 6;
  len: number;
  /** `address/len` with the bits past the prefix cleared. */
  key: string;
}

export type SourceType = 'ANY' | 'SAME_IP_OR_LOOPBACK' | 'EXTERNAL';

export interface ChainMatch {
  destinationPort: number | undefined;
  prefixRanges: Cidr[];
  serverNames: string[];
  transportProtocol: string | undefined;
  applicationProtocols: string[];
  directSourcePrefixRanges: Cidr[];
  sourceType: SourceType;
  sourcePrefixRanges: Cidr[];
  sourcePorts: number[];
}

/** The connection's addresses, for chains that match on them (see usesAddresses). */
export interface ConnectionAddresses {
  local: Endpoint;
  remote: Endpoint;
  directRemote: Endpoint;
}

export interface ConnectionFacts {
  destinationPort: number;
  serverName: string | undefined;
  transportProtocol: 'tls' | 'raw_buffer';
  applicationProtocols: string[];
  addresses?: ConnectionAddresses;
}

const SOURCE_TYPES: readonly SourceType[] = ['ANY', 'SAME_IP_OR_LOOPBACK', 'EXTERNAL'];

/** A CidrRange as a Cidr; a string saying what is wrong with it otherwise. */
export function cidrOf(range: unknown): Cidr | string {
  const r = obj(range);
  const address = String(r.address_prefix ?? '');
  const v = isIP(address);
  if (v === 0) return `malformed IP address: ${address}`;
  const max = v === 4 ? 32 : 128;
  const len = r.prefix_len === undefined ? max : Number(typeof r.prefix_len === 'object' ? obj(r.prefix_len).value : r.prefix_len);
  if (!Number.isInteger(len) || len < 0 || len > max) return `prefix_len ${String(len)} is past an IPv${v} address's ${max} bits`;
  return { family: v === 4 ? 4 : 6, len, key: maskedAddress(address, len, len)! };
}

function cidrs(ranges: unknown): Cidr[] {
  return list(ranges).map(cidrOf).filter((c): c is Cidr => typeof c !== 'string');
}

export function chainMatchOf(chain: JsonObject): ChainMatch {
  const m = obj(chain.filter_chain_match);
  const port = m.destination_port;
  const sourceType = typeof m.source_type === 'number' ? SOURCE_TYPES[m.source_type] : (m.source_type as SourceType | undefined);
  return {
    destinationPort: port === undefined ? undefined : Number(typeof port === 'object' ? obj(port).value : port),
    prefixRanges: cidrs(m.prefix_ranges),
    serverNames: list(m.server_names as unknown).map((s) => String(s).toLowerCase()),
    transportProtocol: typeof m.transport_protocol === 'string' && m.transport_protocol !== '' ? m.transport_protocol : undefined,
    applicationProtocols: list(m.application_protocols as unknown).map(String),
    directSourcePrefixRanges: cidrs(m.direct_source_prefix_ranges),
    sourceType: sourceType ?? 'ANY',
    sourcePrefixRanges: cidrs(m.source_prefix_ranges),
    sourcePorts: list(m.source_ports as unknown).map(Number),
  };
}

/** Whether telling this chain apart needs the ClientHello (SNI, ALPN, TLS or not). */
export function needsInspection(match: ChainMatch): boolean {
  return match.serverNames.length > 0 || match.transportProtocol !== undefined || match.applicationProtocols.length > 0;
}

/** Whether telling this chain apart needs the connection's addresses. */
export function usesAddresses(match: ChainMatch): boolean {
  return match.prefixRanges.length > 0 || match.directSourcePrefixRanges.length > 0 || match.sourcePrefixRanges.length > 0 || match.sourceType !== 'ANY' || match.sourcePorts.length > 0;
}

function narrow<T>(chains: T[], uses: (c: T) => boolean, fits: (c: T) => boolean): T[] {
  const fitting = chains.filter((c) => uses(c) && fits(c));
  return fitting.length > 0 ? fitting : chains.filter((c) => !uses(c));
}

/** The longest of `ranges` that holds `ip` (its length), or -1. */
function longestHolding(ranges: Cidr[], ip: string): number {
  let best = -1;
  const family = isIP(/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? ip.slice(7) : ip);
  for (const r of ranges) if (r.len > best && r.family === family && maskedAddress(ip, r.len, r.len) === r.key) best = r.len;
  return best;
}

/** Envoy's trie lookup: the chains whose range holding `ip` is the longest; chains without ranges hold every address at length 0. */
function byPrefix<T extends { match: ChainMatch }>(chains: T[], ranges: (m: ChainMatch) => Cidr[], ip: string | undefined): T[] {
  if (!chains.some((c) => ranges(c.match).length > 0)) return chains;
  const lengths = chains.map((c) => (ranges(c.match).length === 0 ? 0 : ip === undefined ? -1 : longestHolding(ranges(c.match), ip)));
  const best = Math.max(...lengths);
  return best < 0 ? [] : chains.filter((_, i) => lengths[i] === best);
}

function byServerName<T extends { match: ChainMatch }>(chains: T[], name: string | undefined): T[] {
  const named = chains.filter((c) => c.match.serverNames.length > 0);
  const unnamed = chains.filter((c) => c.match.serverNames.length === 0);
  if (!name || named.length === 0) return unnamed;
  const exact = named.filter((c) => c.match.serverNames.includes(name));
  if (exact.length > 0) return exact;
  // "*.b.example.com", then "*.example.com", then "*.com".
  for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
    const wildcard = `*${name.slice(dot)}`;
    const found = named.filter((c) => c.match.serverNames.includes(wildcard));
    if (found.length > 0) return found;
  }
  return unnamed;
}

/** Envoy's isSameIpOrLoopback: the client is on a loopback address, or on the address it connected to. */
function isLocalConnection(a: ConnectionAddresses): boolean {
  return isLoopback(a.remote.ip) || a.remote.ip === a.local.ip;
}

export function selectChain<T extends { match: ChainMatch }>(chains: T[], facts: ConnectionFacts): T | undefined {
  const a = facts.addresses;
  let candidates = narrow(chains, (c) => c.match.destinationPort !== undefined, (c) => c.match.destinationPort === facts.destinationPort);
  candidates = byPrefix(candidates, (m) => m.prefixRanges, a?.local.ip);
  candidates = byServerName(candidates, facts.serverName);
  candidates = narrow(candidates, (c) => c.match.transportProtocol !== undefined, (c) => c.match.transportProtocol === facts.transportProtocol);
  candidates = narrow(
    candidates,
    (c) => c.match.applicationProtocols.length > 0,
    (c) => c.match.applicationProtocols.some((p) => facts.applicationProtocols.includes(p)),
  );
  if (!a) return candidates[0];
  candidates = byPrefix(candidates, (m) => m.directSourcePrefixRanges, a.directRemote.ip);
  if (candidates.some((c) => c.match.sourceType !== 'ANY')) {
    const type = isLocalConnection(a) ? 'SAME_IP_OR_LOOPBACK' : 'EXTERNAL';
    candidates = narrow(candidates, (c) => c.match.sourceType !== 'ANY', (c) => c.match.sourceType === type);
  }
  candidates = byPrefix(candidates, (m) => m.sourcePrefixRanges, a.remote.ip);
  candidates = narrow(candidates, (c) => c.match.sourcePorts.length > 0, (c) => c.match.sourcePorts.includes(a.remote.port));
  return candidates[0];
}

/** No more combinations than this are spelled out to find chains that overlap (see matchKeys). */
const MAX_COMBINATIONS = 4096;

/**
 * Texts of every combination of values a chain matches on (one per destination range, server name,
 * application protocol, source range and port), as Envoy fills its lookup tables: two chains that
 * share one could never be told apart. A chain with more combinations than MAX_COMBINATIONS gives
 * one text of its whole lists.
 */
export function matchKeys(match: ChainMatch): string[] {
  const axes: (string | number | null)[][] = [
    [match.destinationPort ?? null],
    match.prefixRanges.length ? match.prefixRanges.map((c) => c.key) : [null],
    match.serverNames.length ? match.serverNames : [null],
    [match.transportProtocol ?? null],
    match.applicationProtocols.length ? match.applicationProtocols : [null],
    match.directSourcePrefixRanges.length ? match.directSourcePrefixRanges.map((c) => c.key) : [null],
    [match.sourceType],
    match.sourcePrefixRanges.length ? match.sourcePrefixRanges.map((c) => c.key) : [null],
    match.sourcePorts.length ? match.sourcePorts : [null],
  ];
  if (axes.reduce((n, axis) => n * axis.length, 1) > MAX_COMBINATIONS) return [JSON.stringify(axes.map((axis) => [...axis].sort()))];
  let keys: (string | number | null)[][] = [[]];
  for (const axis of axes) keys = keys.flatMap((k) => axis.map((v) => [...k, v]));
  return keys.map((k) => JSON.stringify(k));
}
