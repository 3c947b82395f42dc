import type { ExtensionDescriptor } from '../../descriptor.js';

/**
 * envoy.extensions.upstreams.http.v3.HttpProtocolOptions, a cluster's
 * typed_extension_protocol_options: its upstream protocol (explicit HTTP/1.1 or HTTP/2, or by ALPN) and its
 * connections' limits, read by ./protocol.ts for the supervisor's health checks and the workers' pools.
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
    category: 'envoy.upstream_options',
    typeName: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
    description: 'a cluster\'s upstream protocol (HTTP/1.1 or HTTP/2) and its options',
    deprecatedNames: [],
    fields: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': ['explicit_http_config', 'auto_config', 'common_http_protocol_options', 'upstream_http_protocol_options'],
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.ExplicitHttpConfig': ['http_protocol_options', 'http2_protocol_options'],
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.AutoHttpConfig': ['http_protocol_options', 'http2_protocol_options'],
    },
  },
];
