import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect as h2connect, type ClientHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket, * as wsModule from 'ws';
import { WebSocketServer } from 'ws';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { readFileSync } from 'node:fs';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';

/**
 * WebSockets through the proxy with real clients (`ws`): HTTP/1.1 Upgrade end to end, HTTP/2
 * extended CONNECT (RFC 8441) to an HTTP/1.1 upstream, and two chained proxies with an HTTP/2
 * hop between them (Envoy's "WebSocket over HTTP/2 hops"); upgrade_configs at the connection
 * manager and per route, answers other than 101, the stream idle timeout, the drain, and Envoy's
 * upgrade figures.
 */

const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } };
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const tmp = tempDir();

let echo: WebSocketServer;
let echoPort: number;
/** The upgrade requests the echo server saw, by path. */
const seen = new Map<string, Record<string, string | string[] | undefined>>();

before(async () => {
  echo = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: (info, done) => {
      seen.set(info.req.url ?? '', info.req.headers);
      if (info.req.url === '/deny') done(false, 401, 'Unauthorized', { 'x-denied': 'yes' });
      else done(true);
    },
  });
  echo.on('connection', (socket) => socket.on('message', (data, binary) => socket.send(data, { binary })));
  await once(echo, 'listening');
  echoPort = (echo.address() as AddressInfo).port;
});

after(async () => {
  await stopAllProxies();
  tmp.cleanup();
  for (const client of echo.clients) client.terminate();
  echo.close();
});

/** A connection manager that allows WebSocket upgrades (its options merged in), routing `/` to `cluster`. */
function hcm(name: string, cluster: string, extra: Record<string, unknown> = {}, routes?: object[]): object {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: name,
      upgrade_configs: [{ upgrade_type: 'websocket' }],
      route_config: {
        virtual_hosts: [
          {
            name: 'all',
            domains: ['*'],
            routes: routes ?? [
              { match: { prefix: '/off' }, route: { cluster, upgrade_configs: [{ upgrade_type: 'WebSocket', enabled: false }] } },
              { match: { prefix: '/' }, route: { cluster } },
            ],
          },
        ],
      },
      http_filters: [ROUTER],
      ...extra,
    },
  };
}

function bootstrap(listeners: object[], clusters: object[]): object {
  return { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners, clusters } };
}

function listener(name: string, filter: object): object {
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] };
}

/** Opens a WebSocket and resolves once it is open (or rejects with the handshake's failure, e.g. its status). */
async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`handshake answered ${res.statusCode}`), { status: res.statusCode, headers: res.headers })));
    ws.once('error', reject);
  });
}

/** Sends `data` and resolves with the next message. */
async function roundTrip(ws: WebSocket, data: string | Buffer): Promise<Buffer> {
  const reply = once(ws, 'message') as Promise<[Buffer]>;
  ws.send(data);
  return (await withDeadline('the echo', reply, 10_000))[0];
}

describe('WebSocket over HTTP/1.1', () => {
  let proxy: RunningProxy;
  const logPath = tmp.file('ws.log', '');
  before(async () => {
    const accessLog = [{ name: 'file', typed_config: { '@type': FILE_LOG, path: logPath, log_format: { text_format_source: { inline_string: '%REQ(:PATH)% %RESPONSE_CODE% %RESPONSE_FLAGS% rx=%BYTES_RECEIVED% tx=%BYTES_SENT% %UPSTREAM_HOST%\n' } } } }];
    proxy = await startProxy(bootstrap([listener('ws', hcm('ws', 'echo', { access_log: accessLog }))], [staticCluster('echo', echoPort)]), ['--concurrency', '1', '--file-flush-interval-msec', '50']);
  });

  it('upgrades end to end: messages both ways, a 1 MiB binary message intact, and the upgrade figures', async () => {
    const port = proxy.ports.get('ws');
    const ws = await open(`ws://127.0.0.1:${port}/chat?room=1`);
    assert.equal((await roundTrip(ws, 'hello')).toString(), 'hello');
    const big = randomBytes(1 << 20);
    assert.ok((await roundTrip(ws, big)).equals(big), 'the binary message comes back intact');
    const headers = seen.get('/chat?room=1')!;
    assert.equal(headers.upgrade, 'websocket');
    assert.match(String(headers['x-request-id']), /^[0-9a-f-]{36}$/, 'the upgrade request is a request like another (x-request-id)');
    assert.equal(await statValue(proxy, 'http.ws.downstream_cx_upgrades_total'), 1);
    assert.equal(await statValue(proxy, 'http.ws.downstream_cx_upgrades_active'), 1);
    ws.close(1000, 'done');
    const [code] = (await once(ws, 'close')) as [number];
    assert.equal(code, 1000, 'the close handshake passes through');
    await waitFor('the upgrade to end', async () => ((await statValue(proxy, 'http.ws.downstream_cx_upgrades_active')) === 0 ? true : undefined));
    assert.equal(await statValue(proxy, 'http.ws.downstream_rq_1xx'), 1);
    assert.equal(await statValue(proxy, 'cluster.echo.upstream_rq_101'), 1);
    // The access log has the upgrade once it ended: its 101 and the tunnel's bytes (a 1 MiB message each way, and more).
    const line = await waitFor('the access log line', () => readFileSync(logPath, 'utf8').split('\n').find((l) => l.startsWith('/chat?room=1 ')));
    const [, status, flags, rx, tx, host] = /^\S+ (\d+) (\S+) rx=(\d+) tx=(\d+) (\S+)$/.exec(line)!;
    assert.deepEqual([status, flags, host], ['101', '-', `127.0.0.1:${echoPort}`]);
    assert.ok(Number(rx) > 1 << 20 && Number(tx) > 1 << 20, `bytes counted both ways (rx=${rx} tx=${tx})`);
  });

  it('refuses an upgrade its route disables (403, downstream_rq_ws_on_non_ws_route), case-insensitively', async () => {
    const port = proxy.ports.get('ws');
    await assert.rejects(open(`ws://127.0.0.1:${port}/off`), (err: { status?: number }) => err.status === 403);
    assert.equal(await statValue(proxy, 'http.ws.downstream_rq_ws_on_non_ws_route'), 1);
    assert.equal(seen.has('/off'), false, 'the upstream never saw it');
  });

  it("passes an upstream's refusal through (401 with its headers), then closes the connection", async () => {
    const port = proxy.ports.get('ws');
    await assert.rejects(open(`ws://127.0.0.1:${port}/deny`), (err: { status?: number; headers?: Record<string, string> }) => err.status === 401 && err.headers?.['x-denied'] === 'yes');
  });

  it('serves plain requests on the same listener, and an upgrade type upgrade_configs does not name is refused', async () => {
    const port = proxy.ports.get('ws')!;
    const r = await httpRequest(`http://127.0.0.1:${port}/plain`, { headers: { connection: 'upgrade', upgrade: 'spdy/3' } });
    assert.equal(r.status, 403);
    assert.equal(await statValue(proxy, 'http.ws.downstream_rq_ws_on_non_ws_route'), 2);
  });
});

describe('WebSocket over HTTP/2 (extended CONNECT, RFC 8441)', () => {
  let proxy: RunningProxy;
  before(async () => {
    proxy = await startProxy(bootstrap([listener('h2ws', hcm('h2ws', 'echo', { http2_protocol_options: { allow_connect: true } }))], [staticCluster('echo', echoPort)]), ['--concurrency', '1']);
  });

  it("reaches an HTTP/1.1 upstream as Upgrade: websocket, answers 200, and carries ws's frames both ways", async () => {
    const session = h2connect(`http://127.0.0.1:${proxy.ports.get('h2ws')}`);
    try {
      await once(session, 'remoteSettings');
      assert.equal(session.remoteSettings.enableConnectProtocol, true, 'allow_connect advertises SETTINGS_ENABLE_CONNECT_PROTOCOL');
      const stream: ClientHttp2Stream = session.request(
        { ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/h2chat', ':authority': 'example', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64') },
        { endStream: false },
      );
      const [headers] = (await withDeadline('the CONNECT answer', once(stream, 'response'), 10_000)) as [Record<string, unknown>];
      assert.equal(headers[':status'], 200);
      assert.equal(headers.upgrade, undefined, 'no hop-by-hop headers on HTTP/2');
      assert.equal(seen.get('/h2chat')?.upgrade, 'websocket');
      // ws's own framing on the stream: a masked client frame out, the server's frame back.
      const { Sender, Receiver } = wsModule as unknown as { Sender: new (s: unknown) => { send(d: Buffer, o: object, cb?: () => void): void }; Receiver: new (o: object) => NodeJS.WritableStream & NodeJS.EventEmitter };
      const receiver = new Receiver({ isServer: false });
      stream.pipe(receiver as never);
      const message = once(receiver, 'message') as Promise<[Buffer, boolean]>;
      new Sender(stream).send(Buffer.from('over h2'), { binary: false, fin: true, mask: true, compress: false, rsv1: false, opcode: 1, readOnly: false });
      const [data] = await withDeadline('the echo over HTTP/2', message, 10_000);
      assert.equal(data.toString(), 'over h2');
      assert.equal(await statValue(proxy, 'http.h2ws.downstream_cx_upgrades_active'), 1);
      stream.close();
      await waitFor('the upgrade to end', async () => ((await statValue(proxy, 'http.h2ws.downstream_cx_upgrades_active')) === 0 ? true : undefined));
    } finally {
      session.destroy();
    }
  });
});

describe('WebSocket across an HTTP/2 hop between two proxies', () => {
  it('goes HTTP/1.1 → extended CONNECT → HTTP/1.1 and back, so a ws client and server see a plain WebSocket', async () => {
    const inner = await startProxy(bootstrap([listener('inner', hcm('inner', 'echo', { codec_type: 'HTTP2', http2_protocol_options: { allow_connect: true } }))], [staticCluster('echo', echoPort)]), ['--concurrency', '1']);
    const h2cluster = { ...staticCluster('inner', inner.ports.get('inner')!), typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } };
    const outer = await startProxy(bootstrap([listener('outer', hcm('outer', 'inner'))], [h2cluster]), ['--concurrency', '1']);
    const ws = await open(`ws://127.0.0.1:${outer.ports.get('outer')}/hop`);
    assert.equal((await roundTrip(ws, 'across')).toString(), 'across');
    const big = randomBytes(300_000);
    assert.ok((await roundTrip(ws, big)).equals(big));
    assert.equal(await statValue(outer, 'cluster.inner.upstream_rq_200'), 1, 'the HTTP/2 hop answered 200');
    assert.equal(await statValue(inner, 'http.inner.downstream_rq_http2_total'), 1);
    ws.close();
    await once(ws, 'close');
  });
});

describe('an upgraded stream', () => {
  it('closes after stream_idle_timeout without a byte either way, and lives while bytes flow', async () => {
    const proxy = await startProxy(bootstrap([listener('idle', hcm('idle', 'echo', { stream_idle_timeout: '1.5s' }))], [staticCluster('echo', echoPort)]), ['--concurrency', '1']);
    const ws = await open(`ws://127.0.0.1:${proxy.ports.get('idle')}/idle`);
    // A message every 250 ms for 2 s keeps it open past the timeout.
    for (let i = 0; i < 8; i++) {
      assert.equal((await roundTrip(ws, `tick ${i}`)).toString(), `tick ${i}`);
      // proves an absence: no idle close while bytes flow within the timeout
      await new Promise((r) => setTimeout(r, 250));
    }
    const [code] = (await withDeadline('the idle close', once(ws, 'close'), 10_000)) as [number];
    assert.equal(code, 1006, 'cut without a close frame');
  });

  it('is cut at max_stream_duration however busy it is (DT), as Envoy resets it', async () => {
    const proxy = await startProxy(bootstrap([listener('dur', hcm('dur', 'echo', { common_http_protocol_options: { max_stream_duration: '1s' } }))], [staticCluster('echo', echoPort)]), ['--concurrency', '1']);
    const ws = await open(`ws://127.0.0.1:${proxy.ports.get('dur')}/dur`);
    const closed = once(ws, 'close') as Promise<[number]>;
    // Messages keep going both ways until the cut: it is not idle.
    let echoes = 0;
    ws.on('message', () => {
      echoes++;
      if (ws.readyState === WebSocket.OPEN) ws.send('busy');
    });
    ws.send('busy');
    assert.equal((await withDeadline('the cut', closed, 15_000))[0], 1006);
    assert.ok(echoes > 1);
    assert.equal(await statValue(proxy, 'http.dur.downstream_rq_max_duration_reached'), 1);
  });

  it('keeps working while its listener drains, and is closed cleanly when the drain time ends', async () => {
    const proxy = await startProxy(bootstrap([listener('drain', hcm('drain', 'echo'))], [staticCluster('echo', echoPort)]), ['--concurrency', '1', '--drain-time-s', '2']);
    const ws = await open(`ws://127.0.0.1:${proxy.ports.get('drain')}/drain`);
    const errors: Error[] = [];
    ws.on('error', (err) => errors.push(err));
    const closed = once(ws, 'close');
    const drained = await httpRequest(`http://${proxy.admin}/drain_listeners?graceful`, { method: 'POST' });
    assert.equal(drained.status, 200);
    assert.equal((await roundTrip(ws, 'still here')).toString(), 'still here', 'the tunnel works during the drain');
    await withDeadline('the drain to close the WebSocket', closed, 15_000);
    assert.deepEqual(errors, [], 'the connection was ended, not reset');
    assert.equal(await statValue(proxy, 'http.drain.downstream_cx_upgrades_active'), 0);
  });
});

describe('upgrade_configs', () => {
  it("are checked as Envoy checks them: one entry per type (case-insensitive), connect_config only for CONNECT; CONNECT-UDP is refused by name", async () => {
    const config = (upgrades: object[], routeUpgrades?: object[]) =>
      tmp.file(`u${Math.random()}.json`, JSON.stringify(bootstrap([listener('v', hcm('v', 'echo', { upgrade_configs: upgrades }, [{ match: { prefix: '/' }, route: { cluster: 'echo', ...(routeUpgrades ? { upgrade_configs: routeUpgrades } : {}) } }]))], [staticCluster('echo', 1)])));
    const refused = async (file: string, message: RegExp) => {
      const r = await runProxy(['--mode', 'validate', '-c', file]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, message);
    };
    await refused(config([{ upgrade_type: 'websocket' }, { upgrade_type: 'WebSocket' }]), /upgrade_configs\[1\]\.upgrade_type: Error: multiple upgrade configs with the same name: 'WebSocket'/);
    await refused(config([], [{ upgrade_type: 'websocket' }, { upgrade_type: 'websocket' }]), /route\.upgrade_configs\[1\]\.upgrade_type: Duplicate upgrade websocket/);
    await refused(config([], [{ upgrade_type: 'websocket', connect_config: {} }]), /route\.upgrade_configs\[0\]\.connect_config: Cannot create a connect config for a non-CONNECT upgrade type/);
    await refused(config([{ upgrade_type: 'CONNECT-UDP' }]), /upgrade_configs\[0\]\.upgrade_type: CONNECT-UDP \(RFC 9298\) is not supported by this proxy/);
    const ok = await runProxy(['--mode', 'validate', '-c', config([{ upgrade_type: 'CONNECT' }], [{ upgrade_type: 'CONNECT', connect_config: { allow_post: true } }])]);
    assert.equal(ok.code, 0, ok.stderr);
  });

  it("let a route decide when it names the type: it may allow one the connection manager does not name or disables", async () => {
    const routes = [
      { match: { prefix: '/on' }, route: { cluster: 'echo', upgrade_configs: [{ upgrade_type: 'websocket' }] } },
      { match: { prefix: '/' }, route: { cluster: 'echo' } },
    ];
    const proxy = await startProxy(
      bootstrap(
        [listener('none', hcm('none', 'echo', { upgrade_configs: [] }, routes)), listener('disabled', hcm('disabled', 'echo', { upgrade_configs: [{ upgrade_type: 'websocket', enabled: false }] }, routes))],
        [staticCluster('echo', echoPort)],
      ),
      ['--concurrency', '1'],
    );
    for (const name of ['none', 'disabled']) {
      const base = `ws://127.0.0.1:${proxy.ports.get(name)}`;
      const ws = await open(`${base}/on`);
      assert.equal((await roundTrip(ws, name)).toString(), name);
      ws.close();
      await assert.rejects(open(`${base}/elsewhere`), (err: { status?: number }) => err.status === 403);
    }
  });

  it("run an upgrade through its own filters when it has them (here RBAC denies upgrades; plain requests pass)", async () => {
    const rbac = { name: 'envoy.filters.http.rbac', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC', rules: { action: 'DENY', policies: { all: { permissions: [{ any: true }], principals: [{ any: true }] } } } } };
    const proxy = await startProxy(bootstrap([listener('own', hcm('own', 'echo', { upgrade_configs: [{ upgrade_type: 'websocket', filters: [rbac, ROUTER] }] }))], [staticCluster('echo', echoPort)]), ['--concurrency', '1']);
    const port = proxy.ports.get('own');
    await assert.rejects(open(`ws://127.0.0.1:${port}/own`), (err: { status?: number }) => err.status === 403);
    assert.equal(await statValue(proxy, 'http.own.rbac.denied'), 1);
    assert.equal(seen.has('/own'), false);
    // A plain request runs http_filters (the router alone): the upstream answers it (a WebSocket server's 426).
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/plain`)).status, 426);
  });
});
