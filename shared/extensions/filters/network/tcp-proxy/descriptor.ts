import type { NetworkFilterDescriptor } from '../../../descriptor.js';
import { checkTcpProxy } from './config.js';

const TCP_PROXY = 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';

/**
 * Envoy's TCP proxy: a connection's bytes to a host of a cluster and back (worker/tcp/), or
 * tunnelled over an HTTP CONNECT or POST (tunneling_config).
 */
export const extensions: readonly NetworkFilterDescriptor[] = [
  {
    name: 'envoy.filters.network.tcp_proxy',
    category: 'envoy.filters.network',
    typeName: TCP_PROXY,
    description: 'TCP proxying to a cluster (weighted clusters, idle timeout, access logs)',
    deprecatedNames: ['envoy.tcp_proxy'],
    terminal: true,
    fields: {
      [TCP_PROXY]: ['stat_prefix', 'cluster', 'weighted_clusters', 'idle_timeout', 'access_log', 'tunneling_config', 'max_connect_attempts'],
      [`${TCP_PROXY}.TunnelingConfig`]: ['hostname', 'use_post', 'headers_to_add', 'post_path'],
      [`${TCP_PROXY}.WeightedCluster`]: ['clusters'],
      [`${TCP_PROXY}.WeightedCluster.ClusterWeight`]: ['name', 'weight'],
    },
    refusalReasons: {
      [`${TCP_PROXY}.TunnelingConfig.propagate_response_headers`]: 'the response headers would go to filter state, which nothing in this proxy reads',
      [`${TCP_PROXY}.TunnelingConfig.propagate_response_trailers`]: 'the response trailers would go to filter state, which nothing in this proxy reads',
    },
    validate: checkTcpProxy,
  },
];
