import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, routesListener, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, withDeadline } from './helpers/proxy.js';
import { serverLocalAddress } from '../worker/http/request-headers.js';
import { startEcho, startUpstream, type Upstream } from './helpers/upstream.js';

const tmp = tempDir();
let upstream: Upstream;
let echo: Awaited<ReturnType<typeof startEcho>>;

before(async () => {
  upstream = await startUpstream('U');
  echo = await startEcho();
});
after(async () => {
  await stopAllProxies();
  await upstream.close();
  echo.server.close();
  tmp.cleanup();
});

function hcm(name: string, cluster: string): object {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: name,
      use_remote_address: true,
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }] },
      http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
    },
  };
}

function unixGet(socketPath: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ socketPath, path }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    }).on('error', reject).end();
  });
}

describe('listeners of every address kind', () => {
  it('serve IPv6 and Unix-socket listeners; pipe clients get the server address in X-Forwarded-For', async () => {
    const sock = join(tmp.dir, 'proxy.sock');
    const endpoint = (host: string, port: number) => ({ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] });
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          { name: 'v6', address: { socket_address: { address: '::1', port_value: 0 } }, filter_chains: [{ filters: [hcm('v6', 'u')] }] },
          { name: 'pipe', address: { pipe: { path: sock, mode: 0o600 } }, filter_chains: [{ filters: [hcm('pipe', 'u')] }] },
        ],
        clusters: [
          { name: 'u', type: 'LOGICAL_DNS', dns_lookup_family: 'V4_ONLY', connect_timeout: '1s', load_assignment: { cluster_name: 'u', endpoints: [endpoint('localhost', upstream.port)] } },
        ],
      },
    };
    for (const version of ['v4', 'v6'] as const) {
      const proxy = await startProxy(bootstrap, ['--concurrency', '1', '--local-address-ip-version', version]);
      const v6 = await httpRequest(`http://[::1]:${proxy.ports.get('v6')}/echo`);
      assert.equal(JSON.parse(v6.body).headers['x-forwarded-for'], serverLocalAddress(version)); // loopback peer: the server's address
      const viaPipe = JSON.parse(await unixGet(sock, '/echo'));
      assert.equal(viaPipe.name, 'U'); // through the LOGICAL_DNS cluster
      const xff = viaPipe.headers['x-forwarded-for'] as string;
      assert.ok(version === 'v4' ? /^\d+\.\d+\.\d+\.\d+$/.test(xff) : xff.includes(':'), `--local-address-ip-version ${version} gave X-Forwarded-For ${xff}`);
      await proxy.stop();
    }
  });

  it('enforces request_headers_timeout on a listener with codec AUTO', async () => {
    const listener = (hcm('slow', 'u') as any);
    listener.typed_config.request_headers_timeout = '0.3s';
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{ name: 'slow', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [listener] }] }],
        clusters: [{ name: 'u', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'u', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstream.port } } } }] }] } }],
      },
    };
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    const socket = tcpConnect(proxy.ports.get('slow')!, '127.0.0.1');
    const started = Date.now();
    const [reply, closedAfter] = await withDeadline('the connection to be closed', new Promise<[string, number]>((resolve) => {
      let data = '';
      socket.on('data', (d) => (data += d));
      socket.on('error', () => {});
      socket.on('close', () => resolve([data, Date.now() - started]));
      socket.write('GET /echo HTTP/1.1\r\nHost: x\r\n'); // and never the end of the headers
    }));
    assert.match(reply, /^HTTP\/1\.1 408/);
    assert.ok(closedAfter >= 250, `closed after ${closedAfter} ms, before the headers timeout`);
    await proxy.stop();
  });

  it('closes a TCP proxy connection idle for longer than idle_timeout', async () => {
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'tcp',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'echo', idle_timeout: '0.3s' } }] }],
        }],
        clusters: [{ name: 'echo', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'echo', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: echo.port } } } }] }] } }],
      },
    };
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    const socket = tcpConnect(proxy.ports.get('tcp')!, '127.0.0.1');
    const started = Date.now();
    const closedAfter = await withDeadline('the idle connection to be closed', new Promise<number>((resolve) => {
      socket.on('data', () => {});
      socket.on('error', () => {});
      socket.on('close', () => resolve(Date.now() - started));
      socket.write('ping');
    }));
    assert.ok(closedAfter >= 250, `closed after ${closedAfter} ms, before the idle timeout`);
    await proxy.stop();
  });

  it('enable_reuse_port: each worker accepts on its own socket of the port, and both get connections', async () => {
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{ ...routesListener('spread', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }]), enable_reuse_port: true }],
      },
    };
    const proxy = await startProxy(bootstrap, ['--concurrency', '2']);
    const port = proxy.ports.get('spread')!;
    // The kernel spreads connections by their addresses' hash: 64 of them all reaching one socket is a chance of 2^-63.
    for (let i = 0; i < 64; i++) assert.equal((await httpRequest(`http://127.0.0.1:${port}/`, { agent: false })).status, 200);
    const address = `127.0.0.1_${port}`;
    const [w0, w1] = [await statValue(proxy, `listener.${address}.worker_0.downstream_cx_total`), await statValue(proxy, `listener.${address}.worker_1.downstream_cx_total`)];
    assert.equal(w0 + w1, 64);
    assert.ok(w0 > 0 && w1 > 0, `worker 0 took ${w0}, worker 1 took ${w1}`);
    await proxy.stop();
  });
});
