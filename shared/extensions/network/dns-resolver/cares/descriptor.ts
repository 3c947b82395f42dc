import type { ExtensionDescriptor } from '../../../descriptor.js';

const CARES = 'envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig';

/**
 * Envoy's c-ares DNS resolver, as a cluster's typed_dns_resolver_config names it: the name
 * servers a STRICT_DNS or LOGICAL_DNS cluster asks (Node's dns.Resolver, which is c-ares too),
 * with their timeout and tries (./cares.ts; supervisor/upstream/dns.ts resolves with it).
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.network.dns_resolver.cares',
    category: 'envoy.network.dns_resolver',
    typeName: CARES,
    description: 'the name servers a DNS cluster asks (c-ares), their timeout and tries',
    deprecatedNames: [],
    fields: { [CARES]: ['resolvers', 'use_resolvers_as_fallback', 'query_timeout_seconds', 'query_tries'] },
    refusalReasons: {
      [`${CARES}.dns_resolver_options`]: 'queries go over UDP, with the search domains of the system',
      [`${CARES}.filter_unroutable_families`]: 'every address a name has is used; choose the family with dns_lookup_family',
      [`${CARES}.udp_max_queries`]: "Node's resolver does not cap a channel's queries",
      [`${CARES}.rotate_nameservers`]: 'the name servers are asked in their order',
      [`${CARES}.edns0_max_payload_size`]: "Node's resolver sets its own EDNS0 payload size",
      [`${CARES}.max_udp_channel_duration`]: "Node's resolver keeps its channel",
      [`${CARES}.reinit_channel_on_timeout`]: "Node's resolver keeps its channel",
    },
  },
];
