import type { TransportSocketDescriptor } from '../../descriptor.js';
import { UPSTREAM_PROXY_PROTOCOL } from './upstream-proxy-protocol.js';

export const extensions: readonly TransportSocketDescriptor[] = [
  {
    name: 'envoy.transport_sockets.upstream_proxy_protocol',
    category: 'envoy.transport_sockets.upstream',
    typeName: UPSTREAM_PROXY_PROTOCOL,
    description: "a cluster's connections begin with a PROXY header (v1 or v2, with TLVs) naming the downstream client",
    deprecatedNames: [],
    tls: false,
    fields: {
      [UPSTREAM_PROXY_PROTOCOL]: ['config', 'transport_socket'],
      'envoy.config.core.v3.ProxyProtocolConfig': ['version', 'pass_through_tlvs', 'added_tlvs'],
      'envoy.config.core.v3.TlvEntry': ['type', 'value', 'format_string'],
      'envoy.config.core.v3.PerHostConfig': ['added_tlvs'],
    },
    // An endpoint's own TLVs (its metadata's typed_filter_metadata['envoy.transport_sockets.proxy_protocol']).
    metadataTypeNames: ['envoy.config.core.v3.PerHostConfig'],
    refusalReasons: {
      [`${UPSTREAM_PROXY_PROTOCOL}.allow_unspecified_address`]: 'Envoy does not implement it either (not-implemented-hide)',
      [`${UPSTREAM_PROXY_PROTOCOL}.tlv_as_pool_key`]: 'Envoy does not implement it either (not-implemented-hide); connections are never shared between downstream origins here',
    },
  },
];
