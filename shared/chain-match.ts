import { list, obj } from './config/access.js';
import type { JsonObject } from './config/proto-json.js';

/**
 * Envoy's filter-chain match: of a listener's chains, the one whose `filter_chain_match` fits
 * the connection best, criterion by criterion in Envoy's order (destination port, server name,
 * transport protocol, application protocols). At each step the chains that name a matching value
 * win; chains that do not use the criterion are the fallback; chains that name other values drop
 * out. Server names match exactly first, then by the longest wildcard suffix (`*.example.com`).
 */

export interface ChainMatch {
  destinationPort: number | undefined;
  serverNames: string[];
  transportProtocol: string | undefined;
  applicationProtocols: string[];
}

export interface ConnectionFacts {
  destinationPort: number;
  serverName: string | undefined;
  transportProtocol: 'tls' | 'raw_buffer';
  applicationProtocols: string[];
}

export function chainMatchOf(chain: JsonObject): ChainMatch {
  const m = obj(chain.filter_chain_match);
  const port = m.destination_port;
  return {
    destinationPort: port === undefined ? undefined : Number(typeof port === 'object' ? obj(port).value : port),
    serverNames: list(m.server_names as unknown).map((s) => String(s).toLowerCase()),
    transportProtocol: typeof m.transport_protocol === 'string' && m.transport_protocol !== '' ? m.transport_protocol : undefined,
    applicationProtocols: list(m.application_protocols as unknown).map(String),
  };
}

/** Whether telling this chain apart needs the ClientHello (SNI, ALPN, TLS or not). */
export function needsInspection(match: ChainMatch): boolean {
  return match.serverNames.length > 0 || match.transportProtocol !== undefined || match.applicationProtocols.length > 0;
}

function narrow<T>(chains: T[], uses: (c: T) => boolean, fits: (c: T) => boolean): T[] {
  const fitting = chains.filter((c) => uses(c) && fits(c));
  return fitting.length > 0 ? fitting : chains.filter((c) => !uses(c));
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

export function selectChain<T extends { match: ChainMatch }>(chains: T[], facts: ConnectionFacts): T | undefined {
  let candidates = narrow(chains, (c) => c.match.destinationPort !== undefined, (c) => c.match.destinationPort === facts.destinationPort);
  candidates = byServerName(candidates, facts.serverName);
  candidates = narrow(candidates, (c) => c.match.transportProtocol !== undefined, (c) => c.match.transportProtocol === facts.transportProtocol);
  candidates = narrow(
    candidates,
    (c) => c.match.applicationProtocols.length > 0,
    (c) => c.match.applicationProtocols.some((p) => facts.applicationProtocols.includes(p)),
  );
  return candidates[0];
}

/** A stable text of a chain's match, to find chains that could never be told apart. */
export function matchKey(match: ChainMatch): string {
  return JSON.stringify([match.destinationPort ?? null, [...match.serverNames].sort(), match.transportProtocol ?? null, [...match.applicationProtocols].sort()]);
}
