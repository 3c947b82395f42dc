import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../../config/wkt.js';

/** A cluster's c-ares resolver settings (Envoy's defaults: 5 s a try, 4 tries). */
export interface CaresSettings {
  /** `ip:port` (IPv6 in brackets), for dns.Resolver.setServers. */
  readonly servers: string[];
  /** use_resolvers_as_fallback: the system's name servers first; these only when it has none. */
  readonly fallback: boolean;
  readonly timeoutMs: number;
  readonly tries: number;
}

const CARES = 'envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig';

/** The cluster's typed_dns_resolver_config, when it is c-ares (the loader refuses any other). */
export function caresSettings(cluster: { typed_dns_resolver_config?: unknown }): CaresSettings | undefined {
  const typed = obj(obj(cluster.typed_dns_resolver_config).typed_config) as JsonObject;
  if (typeNameOfUrl(String(typed['@type'] ?? '')) !== CARES) return undefined;
  const servers = list(typed.resolvers).map((a) => {
    const sa = obj(a.socket_address);
    const host = String(sa.address ?? '');
    return `${host.includes(':') ? `[${host}]` : host}:${Number(sa.port_value ?? 53)}`;
  });
  return {
    servers,
    fallback: typed.use_resolvers_as_fallback === true,
    timeoutMs: Number(typed.query_timeout_seconds ?? 5) * 1000,
    tries: Number(typed.query_tries ?? 4),
  };
}
