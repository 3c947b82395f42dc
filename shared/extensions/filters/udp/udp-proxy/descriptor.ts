import type { ExtensionDescriptor, UdpListenerFilterDescriptor } from '../../../descriptor.js';
import { checkUdpProxy, UDP_ROUTE } from './config.js';

const UDP_PROXY = 'envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig';
const NO_GRO = 'Node reads every datagram whole (up to 64 KiB); there is no receive size or GRO to set';

/** A UDP listener's datagrams proxied to a cluster, session by session (worker/udp/), and its route. */
export const extensions: readonly (UdpListenerFilterDescriptor | ExtensionDescriptor)[] = [
  {
    name: 'envoy.filters.udp_listener.udp_proxy',
    category: 'envoy.filters.udp_listener',
    typeName: UDP_PROXY,
    description: 'UDP proxying to a cluster, session by session',
    deprecatedNames: ['envoy.filters.udp.udp_proxy'],
    fields: {
      [UDP_PROXY]: ['stat_prefix', 'cluster', 'matcher', 'idle_timeout', 'hash_policies', 'use_per_packet_load_balancing', 'access_log'],
      [`${UDP_PROXY}.HashPolicy`]: ['source_ip', 'key'],
    },
    refusalReasons: {
      [`${UDP_PROXY}.use_original_src_ip`]: 'sending from the client\'s address needs IP_TRANSPARENT and CAP_NET_ADMIN, which this proxy does not take',
      [`${UDP_PROXY}.upstream_socket_config`]: NO_GRO,
      [`${UDP_PROXY}.tunneling_config`]: 'UDP tunnelled over HTTP (CONNECT-UDP) is not supported',
      [`${UDP_PROXY}.session_filters`]: 'UDP session filters are not supported',
    },
    validate: checkUdpProxy,
  },
  {
    // The UDP proxy's route: its matcher's action.
    name: UDP_ROUTE,
    category: 'envoy.matching.action',
    typeName: UDP_ROUTE,
    description: 'the UDP proxy\'s matcher action: the cluster of a session',
    deprecatedNames: [],
    fields: { [UDP_ROUTE]: ['cluster'] },
  },
];
