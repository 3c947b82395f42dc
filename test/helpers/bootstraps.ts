import { BootstrapError, loadBootstrap, type BootstrapSource } from '../../shared/config/bootstrap.js';
import type { ConfigError } from '../../shared/config/config-error.js';

/** Small v3 bootstraps for tests, as plain canonical JSON. */

export const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
export const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';

/** What hcmFilter adds: HTTP filters before the router, fields of the connection manager (`hcm`) and of its virtual host (`vhost`). */
export interface HcmOptions {
  filters?: object[];
  hcm?: object;
  vhost?: object;
}

/** An HTTP connection manager (router filter last) with one virtual host of these routes. */
export function hcmFilter(statPrefix: string, routes: object[], options: HcmOptions = {}): Record<string, unknown> {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: statPrefix,
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes, ...options.vhost }] },
      http_filters: [...(options.filters ?? []), { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
      ...options.hcm,
    },
  };
}

/** A listener on 127.0.0.1 (port 0 unless given) whose one filter chain is an HTTP connection manager with these routes. */
export function routesListener(name: string, routes: object[], port = 0, options: HcmOptions = {}): Record<string, unknown> {
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: port } }, filter_chains: [{ filters: [hcmFilter(name, routes, options)] }] };
}

export function httpListener(name: string, port: number, cluster = 'backend'): Record<string, unknown> {
  return routesListener(name, [{ match: { prefix: '/' }, route: { cluster } }], port);
}

/** A STATIC cluster of hosts on 127.0.0.1 at `ports`. */
export function staticCluster(name: string, ports: number | number[]): Record<string, unknown> {
  const lbEndpoints = [ports].flat().map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }));
  return {
    name,
    type: 'STATIC',
    connect_timeout: '0.25s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: lbEndpoints }] },
  };
}

export function minimalBootstrap(): Record<string, unknown> {
  return {
    node: { id: 'node-1', cluster: 'cluster-1', metadata: { team: 'edge', replicas: 3 } },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 9901 } } },
    static_resources: {
      listeners: [httpListener('ingress', 10000)],
      clusters: [{ ...staticCluster('backend', 8080), lb_policy: 'LEAST_REQUEST', least_request_lb_config: { choice_count: 3 } }],
    },
  };
}

/**
 * A bootstrap for an HTTP filter's tests: one listener whose connection manager (stat prefix
 * `name`) runs `filters` and then the router over one virtual host of `routes` (`vhost` adds to
 * it), a static cluster `backend` at `backendPort`, and the admin interface; `extra` adds to the
 * bootstrap (a layered_runtime, say).
 */
export function filterBootstrap(name: string, filters: object[], routes: object[], backendPort: number, vhost: object = {}, extra: object = {}): Record<string, unknown> {
  const hcm = {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: name,
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes, ...vhost }] },
      http_filters: [...filters, { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
    },
  };
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [{ name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm] }] }], clusters: [staticCluster('backend', backendPort)] },
    ...extra,
  };
}

/** loadBootstrap's options: none but `over` set (no file, no overrides). */
export function bootstrapSource(over: Partial<BootstrapSource>): BootstrapSource {
  return {
    configPath: '',
    configYaml: '',
    bootstrapVersion: undefined,
    allowUnknownStaticFields: false,
    disableExtensions: [],
    serviceCluster: '',
    serviceNode: '',
    serviceZone: '',
    ...over,
  };
}

/** The configuration errors of loading `doc` as a bootstrap (given inline); none when it loads. */
export function loadErrors(doc: object): ConfigError[] {
  try {
    loadBootstrap(bootstrapSource({ configYaml: JSON.stringify(doc) }));
  } catch (err) {
    if (!(err instanceof BootstrapError)) throw err;
    return err.errors;
  }
  return [];
}
