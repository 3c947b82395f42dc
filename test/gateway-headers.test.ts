import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * What a gateway control plane sets on every listener (Envoy Gateway's translator output):
 * server_header_transformation, the router's suppress_envoy_headers,
 * ignore_port_in_host_matching and path normalization, with a real upstream and a real client, as Envoy's
 * conn_manager_impl_test (ServerHeader*), router_2_test (RouterTestSuppressEnvoyHeaders) and
 * config_impl's findVirtualHost have them.
 */

let upstream: Server;
let upstreamPort = 0;
let proxy: RunningProxy;

const routes = [
  { match: { prefix: '/rewrite/' }, route: { cluster: 'backend', prefix_rewrite: '/echo/', timeout: '5s' } },
  { match: { prefix: '/redirect' }, redirect: { path_redirect: '/elsewhere' } },
  { match: { prefix: '/direct' }, direct_response: { status: 200, body: { inline_string: 'direct' } } },
  { match: { prefix: '/with-route-server' }, route: { cluster: 'backend' }, response_headers_to_add: [{ header: { key: 'server', value: 'from-route' } }] },
  { match: { prefix: '/echo' }, route: { cluster: 'backend', timeout: '5s' } },
];

const direct = (body: string) => [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: body } } }];
const hostsIgnoringPorts = { ignore_port_in_host_matching: true, virtual_hosts: [{ name: 'a', domains: ['a.example'], routes: direct('a') }, { name: 'v6', domains: ['[::1]'], routes: direct('v6') }] };

function listener(name: string, hcm: object, router: object = {}): object {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{
      filters: [{
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': HCM_TYPE,
          stat_prefix: name,
          route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
          http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE, ...router } }],
          ...hcm,
        },
      }],
    }],
  };
}

const url = (name: string, path: string) => `http://127.0.0.1:${proxy.ports.get(name)}${path}`;
const echo = async (name: string, path: string, headers: Record<string, string> = {}) => {
  const r = await httpRequest(url(name, path), { headers });
  assert.equal(r.status, 200, r.body);
  return { response: r, upstream: JSON.parse(r.body) as { url: string; headers: Record<string, string> } };
};

/** What the proxy answers to `request` written as it is on a new connection, until it closes the connection. */
function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
  });
}

before(async () => {
  // An upstream that names itself in `server` when asked to (?server=…), and echoes what it got.
  upstream = createServer((req, res) => {
    const server = new URL(req.url ?? '/', 'http://x').searchParams.get('server');
    if (server) res.setHeader('server', server);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        listener('overwrite', { server_name: 'edge' }),
        listener('append', { server_name: 'edge', server_header_transformation: 'APPEND_IF_ABSENT' }),
        listener('pass', { server_name: 'edge', server_header_transformation: 'PASS_THROUGH', via: 'edge-proxy' }),
        listener('suppress', {}, { suppress_envoy_headers: true }),
        listener('normalize', { normalize_path: true, merge_slashes: true, path_with_escaped_slashes_action: 'UNESCAPE_AND_REDIRECT' }),
        listener('reject', { path_with_escaped_slashes_action: 'REJECT_REQUEST' }),
        listener('forward', { normalize_path: true, path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' }),
        {
          name: 'ports',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: 'ports', route_config: hostsIgnoringPorts, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }] } }] }],
        },
      ],
      clusters: [staticCluster('backend', upstreamPort)],
    },
  }, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

describe('server_header_transformation', () => {
  it("OVERWRITE (the default) writes server_name over the upstream's, and on every local reply", async () => {
    assert.equal((await echo('overwrite', '/echo?server=backend/1.0')).response.headers.server, 'edge');
    assert.equal((await echo('overwrite', '/echo')).response.headers.server, 'edge');
    assert.equal((await echo('overwrite', '/with-route-server')).response.headers.server, 'edge', "a route's server header is overwritten too");
    for (const path of ['/nowhere', '/direct', '/redirect']) assert.equal((await httpRequest(url('overwrite', path))).headers.server, 'edge', path);
  });

  it("APPEND_IF_ABSENT keeps the upstream's, or a route's, and adds server_name where there is none", async () => {
    assert.equal((await echo('append', '/echo?server=backend/1.0')).response.headers.server, 'backend/1.0');
    assert.equal((await echo('append', '/echo')).response.headers.server, 'edge');
    assert.equal((await echo('append', '/with-route-server')).response.headers.server, 'from-route');
    assert.equal((await httpRequest(url('append', '/nowhere'))).headers.server, 'edge');
  });

  it("PASS_THROUGH leaves the upstream's as it is, and a local reply without one", async () => {
    assert.equal((await echo('pass', '/echo?server=backend/1.0')).response.headers.server, 'backend/1.0');
    assert.equal((await echo('pass', '/echo')).response.headers.server, undefined);
    for (const path of ['/nowhere', '/direct', '/redirect']) {
      const r = await httpRequest(url('pass', path));
      assert.equal(r.headers.server, undefined, path);
    }
    assert.equal((await httpRequest(url('pass', '/nowhere'))).status, 404);
  });
});

describe('via', () => {
  it("is appended to the request's Via and to every response's, proxied or local, as Envoy's appendVia", async () => {
    const { response, upstream: seen } = await echo('pass', '/echo', { via: '1.1 client-side' });
    assert.equal(seen.headers.via, '1.1 client-side, edge-proxy');
    assert.equal(response.headers.via, 'edge-proxy');
    assert.equal((await httpRequest(url('pass', '/nowhere'))).headers.via, 'edge-proxy');
    assert.equal((await echo('overwrite', '/echo')).upstream.headers.via, undefined, 'without via, none');
  });
});

describe("the router's suppress_envoy_headers", () => {
  it('by default: the expected timeout upstream, the original path of a rewrite, the upstream service time', async () => {
    const { response, upstream: seen } = await echo('overwrite', '/rewrite/x?q=1');
    assert.equal(seen.url, '/echo/x?q=1');
    assert.equal(seen.headers['x-envoy-original-path'], '/rewrite/x?q=1');
    assert.equal(seen.headers['x-envoy-expected-rq-timeout-ms'], '5000');
    assert.match(String(response.headers['x-envoy-upstream-service-time']), /^\d+$/);
  });

  it('suppressed: none of them, the request otherwise the same', async () => {
    const { response, upstream: seen } = await echo('suppress', '/rewrite/x?q=1');
    assert.equal(seen.url, '/echo/x?q=1');
    assert.equal(seen.headers['x-envoy-original-path'], undefined);
    assert.equal(seen.headers['x-envoy-expected-rq-timeout-ms'], undefined);
    assert.equal(response.headers['x-envoy-upstream-service-time'], undefined);
    assert.equal(response.headers.server, 'envoy');
  });
});

describe('ignore_port_in_host_matching', () => {
  it("chooses the virtual host by the Host without its port; the upstream's Host keeps it", async () => {
    for (const [host, body] of [['a.example:8080', 'a'], ['A.example', 'a'], ['[::1]:443', 'v6']] as const) {
      const r = await httpRequest(url('ports', '/'), { headers: { host } });
      assert.equal(r.status, 200, host);
      assert.equal(r.body, body, host);
    }
    assert.equal((await httpRequest(url('ports', '/'), { headers: { host: 'b.example:80' } })).status, 404);
  });
});

describe('path normalization', () => {
  it('normalize_path and merge_slashes: the route and the upstream see the normalized path, the query as it came', async () => {
    const { upstream: seen } = await echo('normalize', '/x/../echo/./a//b/%2e%2e/c?q=/../x//y');
    assert.equal(seen.url, '/echo/a/c?q=/../x//y');
  });

  it('UNESCAPE_AND_REDIRECT: a 307 to the normalized path; a gRPC client is refused instead', async () => {
    const r = await httpRequest(url('normalize', '/abc%2f../%5cecho//?k=v'));
    assert.equal(r.status, 307);
    assert.equal(r.headers.location, '/echo/?k=v');
    assert.equal(await statValue(proxy, 'http.normalize.downstream_rq_redirected_with_normalized_path'), 1);
    const grpc = await httpRequest(url('normalize', '/abc%2fdef'), { headers: { 'content-type': 'application/grpc' } });
    assert.equal(grpc.status, 200);
    assert.equal(grpc.headers['grpc-status'], '13');
    assert.equal(await statValue(proxy, 'http.normalize.downstream_rq_failed_path_normalization'), 1);
  });

  it('REJECT_REQUEST: an escaped slash is a 400 and the connection closes; one in the query is not', async () => {
    const r = await httpRequest(url('reject', '/echo%2Fx'));
    assert.equal(r.status, 400);
    assert.equal(r.headers.connection, 'close');
    assert.equal(await statValue(proxy, 'http.reject.downstream_rq_failed_path_normalization'), 1);
    assert.equal((await echo('reject', '/echo?to=%2Fx')).upstream.url, '/echo?to=%2Fx');
  });

  it('UNESCAPE_AND_FORWARD: the upstream gets the unescaped path, normalized', async () => {
    assert.equal((await echo('forward', '/echo/..%2Fecho%5cz')).upstream.url, '/echo/z');
  });

  it('a fragment is a 400 by default, as Envoy (http_reject_path_with_fragment), whatever the other settings', async () => {
    // Node's HTTP client leaves a fragment out of the request line: this one is written by hand.
    const raw = await rawRequest(proxy.ports.get('overwrite')!, 'GET /echo#part HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(raw, /^HTTP\/1\.1 400 /);
    assert.match(raw, /\r\nconnection: close\r\n/i);
    assert.equal(await statValue(proxy, 'http.overwrite.downstream_rq_failed_path_normalization'), 1);
    assert.equal(await statValue(proxy, 'http.overwrite.downstream_rq_redirected_with_normalized_path'), 0);
  });
});
