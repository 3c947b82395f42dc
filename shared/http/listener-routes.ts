import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { chainMatchOf, selectChain, type ConnectionFacts } from '../chain-match.js';

/**
 * Where a listener's requests find their routes: the filter chain a connection takes (by Envoy's
 * filter-chain match, as the workers choose it: shared/chain-match.ts), its HTTP connection
 * manager, and that manager's route configuration, inline or by RDS name. For /route_explain
 * and `proxy route-check --listener-name`.
 */

export const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

export interface ChosenChain {
  /** `0`, `1`, … as the listener lists them, or `default` (default_filter_chain). */
  key: string;
  chain: JsonObject;
  /** The chain's HTTP connection manager (its typed_config), if it has one. */
  hcm?: JsonObject;
}

/** The chain a connection with these facts takes; undefined when none matches (the connection is closed). */
export function chooseChain(listener: JsonObject, facts: ConnectionFacts): ChosenChain | undefined {
  const chains = list(listener.filter_chains).map((chain, i) => ({ key: String(i), chain, match: chainMatchOf(chain) }));
  const chosen = selectChain(chains, facts) ?? (listener.default_filter_chain ? { key: 'default', chain: obj(listener.default_filter_chain) } : undefined);
  if (!chosen) return undefined;
  const hcm = list(chosen.chain.filters)
    .map((f) => obj(f.typed_config))
    .find((c) => c['@type'] === HCM_TYPE);
  return { key: chosen.key, chain: chosen.chain, ...(hcm ? { hcm } : {}) };
}

/** Each chain's HTTP connection manager with its chain key, in the listener's order (default last). */
export function connectionManagers(listener: JsonObject): { key: string; hcm: JsonObject }[] {
  const chains: [string, JsonObject][] = list(listener.filter_chains).map((c, i) => [String(i), c]);
  if (listener.default_filter_chain) chains.push(['default', obj(listener.default_filter_chain)]);
  const out: { key: string; hcm: JsonObject }[] = [];
  for (const [key, chain] of chains) {
    for (const f of list(chain.filters)) if (obj(f.typed_config)['@type'] === HCM_TYPE) out.push({ key, hcm: obj(f.typed_config) });
  }
  return out;
}
