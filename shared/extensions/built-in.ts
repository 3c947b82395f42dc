import type { ExtensionDescriptor } from './descriptor.js';

/**
 * The extensions whose code is part of the proxy's own rooms rather than a folder of its own
 * (index.ts lists those): the connection manager,
 * TCP and UDP proxying, transport sockets.
 */
export const BUILT_IN: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.filters.network.http_connection_manager',
    category: 'envoy.filters.network',
    typeName: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    description: 'HTTP/1.1 and HTTP/2 connections: routes, HTTP filters, the router',
    deprecatedNames: ['envoy.http_connection_manager'],
  },
  {
    name: 'envoy.filters.network.tcp_proxy',
    category: 'envoy.filters.network',
    typeName: 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
    description: 'TCP proxying to a cluster (weighted clusters, idle timeout, access logs)',
    deprecatedNames: ['envoy.tcp_proxy'],
  },
  {
    // TLS on a listener's filter chain (see worker/tls/).
    name: 'envoy.transport_sockets.tls',
    category: 'envoy.transport_sockets.downstream',
    typeName: 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    description: 'TLS on listeners: certificates by SNI, client certificates',
    deprecatedNames: ['tls'],
  },
  {
    // TLS to a cluster's hosts.
    name: 'envoy.transport_sockets.tls',
    category: 'envoy.transport_sockets.upstream',
    typeName: 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    description: 'TLS to upstream hosts: SNI, CA and SAN verification, client certificates',
    deprecatedNames: ['tls'],
  },
  {
    name: 'envoy.transport_sockets.raw_buffer',
    category: 'envoy.transport_sockets.downstream',
    typeName: 'envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer',
    description: 'plaintext (the default transport socket)',
    deprecatedNames: ['raw_buffer'],
  },
  {
    // A UDP listener's datagrams proxied to a cluster, in sessions (see worker/udp/).
    name: 'envoy.filters.udp_listener.udp_proxy',
    category: 'envoy.filters.udp_listener',
    typeName: 'envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig',
    description: 'UDP proxying to a cluster, session by session',
    deprecatedNames: ['envoy.filters.udp.udp_proxy'],
  },
  {
    // The UDP proxy's route (its matcher's action).
    name: 'envoy.extensions.filters.udp.udp_proxy.v3.Route',
    category: 'envoy.matching.action',
    typeName: 'envoy.extensions.filters.udp.udp_proxy.v3.Route',
    description: 'the UDP proxy\'s matcher action: the cluster of a session',
    deprecatedNames: [],
  },
];
