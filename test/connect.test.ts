import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect as h2connect, type ClientHttp2Stream } from 'node:http2';
import { connect as tcpConnect, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { startEcho } from './helpers/upstream.js';

/**
 * CONNECT and TCP tunnelling with real clients, as Envoy's terminate_* / encapsulate_in_* /
 * proxy_connect configurations do them: CONNECT terminated over HTTP/1.1 (a `curl
 * --proxytunnel`-style client) and HTTP/2, a POST terminated with allow_post, CONNECT proxied to
 * an upstream that terminates it, and a TCP stream carried through two chained proxies over
 * HTTP/2 CONNECT, HTTP/2 POST and HTTP/1.1 CONNECT. The far end is a TCP echo server.
 */

const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } };
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const H2_OPTIONS = { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } };

const tmp = tempDir();
let echo: { port: number; server: Server };
/** The terminating proxy: CONNECT (HTTP/1.1 and HTTP/2) and POST to the echo server, with an access log of what reached it. */
let terminator: RunningProxy;
const terminatorLog = tmp.file('terminator.log', '');

function bootstrap(listeners: object[], clusters: object[]): object {
  return { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners, clusters } };
}

function hcmListener(name: string, routes: object[], extra: Record<string, unknown> = {}): object {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM_TYPE, stat_prefix: name, route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] }, http_filters: [ROUTER], ...extra } }] }],
  };
}

const TERMINATE = { upgrade_type: 'CONNECT', connect_config: {} };

before(async () => {
  echo = await startEcho();
  const accessLog = [{ name: 'file', typed_config: { '@type': FILE_LOG, path: terminatorLog, log_format: { text_format_source: { inline_string: '%REQ(:METHOD)% %REQ(:AUTHORITY)% %REQ(X-TUNNEL-ID)% %RESPONSE_CODE%\n' } } } }];
  terminator = await startProxy(
    bootstrap(
      [
        hcmListener(
          'term',
          [
            { match: { connect_matcher: {} }, route: { cluster: 'echo', upgrade_configs: [TERMINATE] } },
            { match: { prefix: '/', headers: [{ name: ':method', string_match: { exact: 'POST' } }] }, route: { cluster: 'echo', upgrade_configs: [{ upgrade_type: 'CONNECT', connect_config: { allow_post: true } }] } },
          ],
          { upgrade_configs: [{ upgrade_type: 'CONNECT' }], http2_protocol_options: { allow_connect: true }, access_log: accessLog },
        ),
        hcmListener('plain', [{ match: { prefix: '/' }, route: { cluster: 'echo' } }]),
      ],
      [staticCluster('echo', echo.port)],
    ),
    // Its access log is read by the tests: flushed every 50 ms rather than Envoy's default 10 s.
    ['--concurrency', '1', '--file-flush-interval-msec', '50'],
  );
});

after(async () => {
  await stopAllProxies();
  echo.server.close();
  tmp.cleanup();
});

/** Writes `data` on `stream`, ends it, and resolves with everything read back until the far end ends. */
async function echoed(stream: Duplex, data: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  const ended = once(stream, 'end');
  stream.write(data);
  // Half-close once everything came back, so the echo's end follows.
  let received = 0;
  stream.on('data', (c: Buffer) => {
    received += c.length;
    if (received >= data.length) stream.end();
  });
  await withDeadline('the echo', ended, 20_000);
  return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** An HTTP/1.1 CONNECT, as `curl --proxytunnel` sends it; resolves with the answer and the tunnel. */
function connectHttp1(port: number, target: string): Promise<{ status: number; socket: Socket; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'CONNECT', path: target, headers: { host: target } });
    req.once('connect', (res, socket: Socket, head: Buffer) => resolve({ status: res.statusCode ?? 0, socket, head }));
    req.once('response', (res) => resolve({ status: res.statusCode ?? 0, socket: res.socket as Socket, head: Buffer.alloc(0) }));
    req.once('error', reject);
    req.end();
  });
}

describe('CONNECT terminated (connect_config)', () => {
  it('over HTTP/1.1: 200, then the payload to the cluster as TCP and back (1 MiB, intact)', async () => {
    const { status, socket, head } = await connectHttp1(terminator.ports.get('term')!, 'www.example.com:443');
    assert.equal(status, 200);
    assert.equal(head.length, 0);
    const data = randomBytes(1 << 20);
    assert.equal(sha(await echoed(socket, data)), sha(data));
    const line = await waitFor('the access log line', () => readFileSync(terminatorLog, 'utf8').split('\n').find((l) => l.startsWith('CONNECT www.example.com:443 ')));
    assert.match(line, / 200$/);
  });

  it('over HTTP/2: a CONNECT stream answered 200 carries the bytes both ways', async () => {
    const session = h2connect(`http://127.0.0.1:${terminator.ports.get('term')}`);
    try {
      const stream: ClientHttp2Stream = session.request({ ':method': 'CONNECT', ':authority': 'h2.example:443' }, { endStream: false });
      const [headers] = (await withDeadline('the CONNECT answer', once(stream, 'response'), 10_000)) as [Record<string, unknown>];
      assert.equal(headers[':status'], 200);
      const data = randomBytes(300_000);
      assert.equal(sha(await echoed(stream, data)), sha(data));
    } finally {
      session.destroy();
    }
  });

  it('a POST with allow_post: its body goes to the cluster as TCP, and what comes back is the 200 response body', async () => {
    const session = h2connect(`http://127.0.0.1:${terminator.ports.get('term')}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/tunnel', ':authority': 'post.example' }, { endStream: false });
      const [headers] = (await withDeadline('the POST answer', once(stream, 'response'), 10_000)) as [Record<string, unknown>];
      assert.equal(headers[':status'], 200);
      const data = randomBytes(200_000);
      assert.equal(sha(await echoed(stream, data)), sha(data));
    } finally {
      session.destroy();
    }
  });

  it('is refused where no route allows CONNECT (403), as Envoy refuses it', async () => {
    const { status } = await connectHttp1(terminator.ports.get('plain')!, 'www.example.com:443');
    assert.equal(status, 403);
    assert.equal(await statValue(terminator, 'http.plain.downstream_rq_ws_on_non_ws_route'), 1);
  });
});

describe('CONNECT proxied (no connect_config) to an upstream that terminates it', () => {
  for (const protocol of ['HTTP/1.1', 'HTTP/2'] as const) {
    it(`over ${protocol} to the upstream: the client's tunnel reaches the echo server`, async () => {
      const upstream = { ...staticCluster('terminator', terminator.ports.get('term')!), ...(protocol === 'HTTP/2' ? { typed_extension_protocol_options: H2_OPTIONS } : {}) };
      const name = protocol === 'HTTP/2' ? 'fwd2' : 'fwd1';
      const front = await startProxy(
        bootstrap([hcmListener(name, [{ match: { connect_matcher: {} }, route: { cluster: 'terminator', upgrade_configs: [{ upgrade_type: 'CONNECT' }] } }])], [upstream]),
        ['--concurrency', '1'],
      );
      const { status, socket } = await connectHttp1(front.ports.get(name)!, `${name}.example:443`);
      assert.equal(status, 200);
      const data = randomBytes(500_000);
      assert.equal(sha(await echoed(socket, data)), sha(data));
      assert.equal(await statValue(front, 'cluster.terminator.upstream_rq_200'), 1, 'the upstream accepted the CONNECT');
    });
  }
});

describe('TCP tunnelled over HTTP between two proxies (tunneling_config)', () => {
  const cases = [
    { name: 'h2connect', h2: true, tunneling: { hostname: 'tunnel.example:7', headers_to_add: [{ header: { key: 'x-tunnel-id', value: 'h2-%DOWNSTREAM_LOCAL_PORT%' } }] }, method: 'CONNECT' },
    { name: 'h2post', h2: true, tunneling: { hostname: 'tunnel.example:7', use_post: true, post_path: '/tunnel' }, method: 'POST' },
    { name: 'h1connect', h2: false, tunneling: { hostname: 'tunnel.example:7', headers_to_add: [{ header: { key: 'x-tunnel-id', value: 'h1' } }] }, method: 'CONNECT' },
  ];
  for (const c of cases) {
    it(`${c.h2 ? 'HTTP/2' : 'HTTP/1.1'} ${c.method}: 1 MiB through the tunnel and back, intact`, async () => {
      const cluster = { ...staticCluster('terminator', terminator.ports.get('term')!), ...(c.h2 ? { typed_extension_protocol_options: H2_OPTIONS } : {}) };
      const listener = {
        name: c.name,
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: c.name, cluster: 'terminator', tunneling_config: c.tunneling } }] }],
      };
      const front = await startProxy(bootstrap([listener], [cluster]), ['--concurrency', '1']);
      const port = front.ports.get(c.name)!;
      const socket = tcpConnect(port, '127.0.0.1');
      await once(socket, 'connect');
      const data = randomBytes(1 << 20);
      assert.equal(sha(await echoed(socket, data)), sha(data));
      const expected = c.method === 'CONNECT' ? `CONNECT tunnel.example:7 ${c.h2 ? `h2-${port}` : 'h1'} 200` : 'POST tunnel.example:7 - 200';
      await waitFor(`the terminator's log line '${expected}'`, () => readFileSync(terminatorLog, 'utf8').split('\n').find((l) => l === expected));
    });
  }

  it('refuses tunneling_config.post_path without use_post, as Envoy does', async () => {
    const listener = {
      name: 'bad',
      address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
      filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'bad', cluster: 'c', tunneling_config: { hostname: 'h:1', post_path: '/p' } } }] }],
    };
    const r = await runProxy(['--mode', 'validate', '-c', tmp.file('bad.json', JSON.stringify(bootstrap([listener], [staticCluster('c', 1)])))]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /tunneling_config\.post_path: Can't set a post path when POST method isn't used/);
  });
});
