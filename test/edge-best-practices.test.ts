import assert from 'node:assert/strict';
import { request } from 'node:https';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, routesListener, staticCluster } from './helpers/bootstraps.js';
import { DOWNSTREAM_TLS_TYPE, makePki, type Leaf, type TestPki } from './helpers/certs.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor } from './helpers/proxy.js';
import { startH2Upstream } from './helpers/upstream.js';

/**
 * Envoy's "edge proxy best practices" bootstrap (docs: configuration/best_practices/edge), with
 * every setting it recommends: the overload manager with its heap monitor, TLS by SNI with the TLS
 * inspector, 32 KiB connection buffers, the connection manager's path normalization and timeouts,
 * HTTP/2 windows, a route's idle_timeout, an HTTP/2 upstream, and the runtime's connection limits.
 * Only the addresses (port 0), the certificate (the test's own) and the upstream (a local h2c
 * server) differ. It validates and serves.
 */

let pki: TestPki;
let leaf: Leaf;
let upstream: { port: number; close: () => Promise<void> };

before(async () => {
  pki = makePki();
  leaf = pki.leaf('example', { sans: ['DNS:example.com', 'DNS:www.example.com'], serial: '4001' });
  upstream = await startH2Upstream();
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  pki.remove();
});

function edgeBootstrap(): object {
  return {
    overload_manager: {
      refresh_interval: '0.25s',
      resource_monitors: [{ name: 'envoy.resource_monitors.fixed_heap', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig', max_heap_size_bytes: 2147483648 } }],
      actions: [
        { name: 'envoy.overload_actions.shrink_heap', triggers: [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.95 } }] },
        { name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.98 } }] },
      ],
    },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: 'example_listener_name',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }],
        per_connection_buffer_limit_bytes: 32768,
        filter_chains: [{
          filter_chain_match: { server_names: ['example.com', 'www.example.com'] },
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificates: [{ certificate_chain: { filename: leaf.certPath }, private_key: { filename: leaf.keyPath } }] } },
          },
          filters: [{
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': HCM_TYPE,
              stat_prefix: 'ingress_http',
              use_remote_address: true,
              normalize_path: true,
              merge_slashes: true,
              path_with_escaped_slashes_action: 'UNESCAPE_AND_REDIRECT',
              common_http_protocol_options: { idle_timeout: '3600s', headers_with_underscores_action: 'REJECT_REQUEST' },
              http2_protocol_options: { max_concurrent_streams: 100, initial_stream_window_size: 65536, initial_connection_window_size: 1048576 },
              stream_idle_timeout: '300s',
              request_timeout: '300s',
              route_config: { virtual_hosts: [{ name: 'default', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'service_foo', idle_timeout: '15s' } }] }] },
              http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
            },
          }],
        }],
      }],
      clusters: [{
        ...staticCluster('service_foo', upstream.port),
        per_connection_buffer_limit_bytes: 32768,
        typed_extension_protocol_options: {
          'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
            '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
            explicit_http_config: { http2_protocol_options: { initial_stream_window_size: 65536, initial_connection_window_size: 1048576 } },
          },
        },
      }],
    },
    layered_runtime: {
      layers: [{ name: 'static_layer_0', static_layer: { envoy: { resource_limits: { listener: { example_listener_name: { connection_limit: 10000 } } } }, overload: { global_downstream_max_connections: 50000 } } }],
    },
  };
}

function get(port: number, path: string, servername = 'example.com'): Promise<{ status: number; body: string; location?: string }> {
  return new Promise((resolve, reject) => {
    const rq = request({ host: '127.0.0.1', port, path, servername, ca: pki.ca, headers: { host: servername }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ...(res.headers.location ? { location: res.headers.location } : {}) }));
    });
    rq.on('error', reject);
    rq.end();
  });
}

describe("Envoy's edge best-practices bootstrap", () => {
  it('validates and serves: TLS by SNI, normalized paths to an HTTP/2 upstream, the overload manager watching', async () => {
    const proxy = await startProxy(edgeBootstrap(), ['--concurrency', '2']);
    const port = proxy.ports.get('example_listener_name')!;
    const r = await get(port, '/a//b/../c');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual([JSON.parse(r.body).httpVersion, JSON.parse(r.body).path], ['2.0', '/a/c']);
    const redirect = await get(port, '/a%2fb');
    assert.deepEqual([redirect.status, redirect.location], [307, '/a/b']);
    assert.equal((await get(port, '/', 'www.example.com')).status, 200);
    const pressure = await statValue(proxy, 'overload.envoy.resource_monitors.fixed_heap.pressure');
    assert.ok(pressure >= 0 && pressure < 50, `pressure ${pressure}`);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.stop_accepting_requests.active'), 0);
    await proxy.stop();
  });
});

describe('overload.global_downstream_max_connections', () => {
  it("closes a connection past the limit at once, whichever listener and worker it reaches (downstream_global_cx_overflow)", async () => {
    const doc = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: ['a', 'b'].map((name) => routesListener(name, [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: name } } }])) },
      layered_runtime: { layers: [{ name: 'static', static_layer: { overload: { global_downstream_max_connections: 1 } } }] },
    };
    const proxy = await startProxy(doc, ['--concurrency', '2']);
    const held = connect(proxy.ports.get('a')!, '127.0.0.1');
    await new Promise((resolve) => held.once('connect', resolve));
    await waitFor('the first connection counted', async () => ((await statValue(proxy, `listener.127.0.0.1_${proxy.ports.get('a')}.downstream_cx_active`)) === 1 ? true : undefined));
    await waitFor('a second connection refused', async () => {
      const refused = await httpRequest(`http://127.0.0.1:${proxy.ports.get('b')}/`, { agent: false }).then(() => false, () => true);
      return refused ? true : undefined;
    });
    const overflow = (await statValue(proxy, `listener.127.0.0.1_${proxy.ports.get('b')}.downstream_global_cx_overflow`));
    assert.ok(overflow >= 1, `overflow ${overflow}`);
    held.destroy();
    await waitFor('served again once the first closes', async () => ((await httpRequest(`http://127.0.0.1:${proxy.ports.get('b')}/`, { agent: false }).then((r) => r.body, () => '')) === 'b' ? true : undefined));
    await proxy.stop();
  });
});
