import assert from 'node:assert/strict';
import { connect as h2connect, createServer as createH2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The connection manager's protocol options as Envoy applies them, seen by real clients: what
 * an empty filter chain does, HTTP/2 settings and keepalive, HTTP/1 trailers, the scheme.
 */

const tmp = tempDir();
let upstream: Upstream | undefined;

after(async () => {
  await stopAllProxies();
  await upstream?.close();
  tmp.cleanup();
});

/** One listener whose connection manager is `hcm` (stat prefix and routes added). */
function bootstrap(name: string, hcm: Record<string, unknown>, routes: object[] = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }]): Record<string, unknown> {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        {
          name,
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM_TYPE, stat_prefix: name, route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] }, ...hcm } }] }],
        },
      ],
      clusters: [],
    },
  };
}

describe('an empty http_filters list', () => {
  it("loads as Envoy's does, with a warning, and answers nothing until the stream idle timeout (408)", async () => {
    const config = bootstrap('bare', { http_filters: [], stream_idle_timeout: '0.3s' });
    const validated = await runProxy(['--mode', 'validate', '-c', tmp.file('bare.json', JSON.stringify(config))]);
    assert.equal(validated.code, 0, validated.stderr);
    assert.match(validated.stderr, /typed_config\.http_filters is empty: no request on it is answered until stream_idle_timeout/);
    const proxy = await startProxy(config, ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('bare')}/`);
    assert.deepEqual([r.status, r.body], [408, 'stream timeout']);
  });
});

describe('stream_idle_timeout', () => {
  it('answers 408 when a whole request waits on an upstream that says nothing (the stream is idle both ways)', async () => {
    upstream = await startUpstream('slow');
    const config = bootstrap('idle', { http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }], stream_idle_timeout: '0.3s' }, [
      { match: { prefix: '/' }, route: { cluster: 'slow', timeout: '0s' } },
    ]);
    (config.static_resources as { clusters: object[] }).clusters.push(staticCluster('slow', upstream.port));
    const proxy = await startProxy(config, ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('idle')}/hold?key=never`);
    assert.deepEqual([r.status, r.body], [408, 'stream timeout']);
  });
});

describe('http2_protocol_options', () => {
  const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };

  it("sends the configured SETTINGS and connection window to clients, and pings them at the keepalive interval", async () => {
    const options = {
      hpack_table_size: 8192,
      max_concurrent_streams: 5,
      initial_stream_window_size: 1048576,
      initial_connection_window_size: 2097152,
      allow_connect: true,
      custom_settings_parameters: [{ identifier: 0x20, value: 7 }],
      connection_keepalive: { interval: '0.1s', timeout: '2s' },
    };
    const proxy = await startProxy(bootstrap('h2opts', { codec_type: 'HTTP2', http_filters: [ROUTER], http2_protocol_options: options }), ['--concurrency', '1']);
    const session = h2connect(`http://127.0.0.1:${proxy.ports.get('h2opts')}`, { remoteCustomSettings: [0x20] } as never);
    try {
      let pings = 0;
      session.on('ping', () => pings++);
      await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
      const s = session.remoteSettings as Record<string, unknown>;
      assert.deepEqual([s.headerTableSize, s.maxConcurrentStreams, s.initialWindowSize, s.enableConnectProtocol], [8192, 5, 1048576, true]);
      assert.deepEqual(s.customSettings, { 32: 7 });
      const stream = session.request({ ':path': '/' });
      stream.resume();
      await new Promise((resolve) => stream.once('end', resolve));
      assert.equal(session.state.remoteWindowSize, 2097152, "the proxy's connection window, as the client may fill it");
      await waitFor('two keepalive pings from the proxy', () => (pings >= 2 ? true : undefined));
    } finally {
      session.close();
    }
  });

  it('opens another upstream connection when one carries max_concurrent_streams, and pings upstreams at the keepalive interval', async () => {
    const sessions: Http2Session[] = [];
    let pings = 0;
    const held: ServerHttp2Stream[] = [];
    const server = createH2Server();
    server.on('session', (s: Http2Session) => {
      sessions.push(s);
      s.on('ping', () => pings++);
    });
    server.on('stream', (stream: ServerHttp2Stream) => {
      held.push(stream);
      // Three streams at once: only then does any get an answer.
      if (held.length === 3) for (const h of held) h.respond({ ':status': 200 }, { endStream: false }), h.end('up');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const h2 = { max_concurrent_streams: 1, connection_keepalive: { interval: '0.1s', timeout: '2s' } };
      const config = bootstrap('h2up', { http_filters: [ROUTER] }, [{ match: { prefix: '/' }, route: { cluster: 'h2' } }]);
      (config.static_resources as { clusters: object[] }).clusters.push({ ...staticCluster('h2', (server.address() as { port: number }).port), http2_protocol_options: h2 });
      const proxy = await startProxy(config, ['--concurrency', '1']);
      const url = `http://127.0.0.1:${proxy.ports.get('h2up')}/`;
      const answers = await Promise.all([1, 2, 3].map(() => httpRequest(url)));
      assert.deepEqual(answers.map((a) => a.body), ['up', 'up', 'up']);
      assert.equal(sessions.length, 3, 'one stream per connection');
      await waitFor('keepalive pings from the proxy', () => (pings >= 2 ? true : undefined));
    } finally {
      for (const s of sessions) s.destroy();
      server.close();
    }
  });

  it("refuses what Node's HTTP/2 cannot do, and custom SETTINGS that shadow a named one, by name", async () => {
    const config = bootstrap('h2bad', { http_filters: [ROUTER], http2_protocol_options: { max_outbound_frames: 100, custom_settings_parameters: [{ identifier: 3, value: 9 }] } });
    (config.static_resources as { clusters: object[] }).clusters.push({ ...staticCluster('h2', 1), http2_protocol_options: { allow_connect: true } });
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('h2bad.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /http2_protocol_options\.max_outbound_frames: field 'max_outbound_frames' of envoy\.config\.core\.v3\.Http2ProtocolOptions is not supported by this proxy \(Node's HTTP\/2/);
    assert.match(out.stderr, /http2_protocol_options\.custom_settings_parameters\[0\]\.identifier: 3 is a standard SETTINGS parameter; set it with its named field/);
    assert.doesNotMatch(out.stderr, /allow_connect/, "a cluster's allow_connect is sent in its SETTINGS, as Envoy's client codec does");
  });
});

/** One raw HTTP/1.x exchange: what the proxy wrote back, whole (it closes or the reply is complete). */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(request));
    let got = '';
    socket.on('data', (d) => {
      got += d.toString('latin1');
      if (/\r\n0\r\n(?:[^\r\n]+\r\n)*\r\n$/.test(got) || /content-length: 0\r\n(?:[^\r\n]+\r\n)*\r\n$/i.test(got)) socket.end();
    });
    socket.on('end', () => resolve(got));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('http_protocol_options', () => {
  const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
  const onlyHost = (host: string) => [{ name: 'h', domains: [host], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: `served ${host}` } } }] }];

  it('refuses HTTP/1.0 with 426 and closes, as Envoy does by default; with accept_http_10 serves it, with default_host_for_http_10 as its Host', async () => {
    const refusing = await startProxy(bootstrap('h10no', { http_filters: [ROUTER] }), ['--concurrency', '1']);
    const refused = await rawExchange(refusing.ports.get('h10no')!, 'GET / HTTP/1.0\r\n\r\n');
    assert.match(refused, /^HTTP\/1\.1 426 Upgrade Required\r\n/);
    assert.match(refused, /\r\nconnection: close\r\n/i);
    assert.ok(refused.endsWith('Upgrade Required'), refused);

    const config = bootstrap('h10', { http_filters: [ROUTER], http_protocol_options: { accept_http_10: true, default_host_for_http_10: 'legacy.test' } });
    ((config.static_resources as any).listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts = onlyHost('legacy.test'));
    const accepting = await startProxy(config, ['--concurrency', '1']);
    const served = await rawExchange(accepting.ports.get('h10')!, 'GET / HTTP/1.0\r\n\r\n');
    // As Envoy's codec with accept_http_10 (integration_test.cc, Http10Enabled): an HTTP/1.0 status line.
    assert.match(served, /^HTTP\/1\.0 200 OK\r\n/);
    assert.ok(served.endsWith('served legacy.test'), served);
  });

  it("passes the upstream's trailers to an HTTP/1.1 client with enable_trailers (chunked), and drops them without", async () => {
    const server = createH2Server();
    server.on('stream', (stream: ServerHttp2Stream) => {
      stream.respond({ ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc' }));
      stream.end('body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const up = (server.address() as { port: number }).port;
      const make = (name: string, h1: object) => {
        const config = bootstrap(name, { http_filters: [ROUTER], http_protocol_options: h1 }, [{ match: { prefix: '/' }, route: { cluster: 'h2' } }]);
        (config.static_resources as { clusters: object[] }).clusters.push({ ...staticCluster('h2', up), http2_protocol_options: {} });
        return config;
      };
      const withTrailers = await startProxy(make('trailers', { enable_trailers: true }), ['--concurrency', '1']);
      const got = await rawExchange(withTrailers.ports.get('trailers')!, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      assert.match(got, /transfer-encoding: chunked\r\n/i);
      assert.match(got, /\r\n0\r\nx-checksum: abc\r\n\r\n$/);
      const without = await startProxy(make('notrailers', {}), ['--concurrency', '1']);
      const plain = await rawExchange(without.ports.get('notrailers')!, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      assert.match(plain, /\r\n0\r\n\r\n$/);
    } finally {
      server.close();
    }
  });

  it('refuses HTTP/1 options on a cluster, where they would not apply', async () => {
    const config = bootstrap('h1bad', { http_filters: [ROUTER] });
    (config.static_resources as { clusters: object[] }).clusters.push({
      ...staticCluster('c', 1),
      typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http_protocol_options: { enable_trailers: true } } } },
    });
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('h1bad.json', JSON.stringify(config))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /explicit_http_config\.http_protocol_options\.enable_trailers: not applied to upstream connections by this proxy/);
  });
});

describe('common_http_protocol_options limits', () => {
  const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
  const statOf = async (admin: string, name: string) => Number(/: (\d+)/.exec((await httpRequest(`http://${admin}/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`)).body)?.[1]);

  it('closes an HTTP/1.1 connection after max_requests_per_connection, and sends GOAWAY on HTTP/2', async () => {
    const proxy = await startProxy(bootstrap('maxrq', { http_filters: [ROUTER], common_http_protocol_options: { max_requests_per_connection: 2 } }), ['--concurrency', '1']);
    const port = proxy.ports.get('maxrq')!;
    const two = await rawExchange(port, 'GET / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.equal(two.match(/HTTP\/1\.1 200/g)?.length, 2, 'the third request is never read');
    assert.match(two, /connection: close\r\n[^]*$/i);
    /** The last stream id of the first GOAWAY an HTTP/2 client gets after two requests. */
    const goawayAfterTwo = async (p: number) => {
      const session = h2connect(`http://127.0.0.1:${p}`);
      try {
        const goaway = new Promise<number>((resolve) => session.once('goaway', (_code: number, last: number) => resolve(last)));
        for (let i = 0; i < 2; i++) {
          const s = session.request({ ':path': '/' });
          s.resume();
          await new Promise((resolve) => s.once('end', resolve));
        }
        return await goaway;
      } finally {
        session.destroy();
      }
    };
    // drain_timeout (5 s by default): first a shutdown notice, GOAWAY with the highest stream id.
    assert.equal(await goawayAfterTwo(port), 2 ** 31 - 1);
    assert.equal(await statOf(proxy.admin, 'http.maxrq.downstream_cx_max_requests_reached'), 2);
    const immediate = await startProxy(bootstrap('maxrq0', { http_filters: [ROUTER], drain_timeout: '0s', common_http_protocol_options: { max_requests_per_connection: 2 } }), ['--concurrency', '1']);
    assert.equal(await goawayAfterTwo(immediate.ports.get('maxrq0')!), 3, 'drain_timeout 0: the final GOAWAY at once, naming the last stream');
  });

  it('closes an HTTP/1.1 connection idle past idle_timeout (and its margin), counted once, though a short stream_idle_timeout came first', async () => {
    const proxy = await startProxy(bootstrap('idlecx', { http_filters: [ROUTER], stream_idle_timeout: '0.1s', common_http_protocol_options: { idle_timeout: '0.3s' } }), ['--concurrency', '1']);
    const socket = tcpConnect(proxy.ports.get('idlecx')!, '127.0.0.1');
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await closed;
    assert.match(out, /^HTTP\/1\.1 200 /, 'answered, then closed when idle');
    assert.equal(await statOf(proxy.admin, 'http.idlecx.downstream_cx_idle_timeout'), 1);
  });

  it('drains a connection at max_connection_duration: an idle HTTP/1.1 one is closed', async () => {
    const proxy = await startProxy(bootstrap('maxdur', { http_filters: [ROUTER], common_http_protocol_options: { max_connection_duration: '0.2s' } }), ['--concurrency', '1']);
    const socket = tcpConnect(proxy.ports.get('maxdur')!, '127.0.0.1');
    await new Promise((resolve) => socket.once('close', resolve));
    assert.equal(await statOf(proxy.admin, 'http.maxdur.downstream_cx_max_duration_reached'), 1);
  });

  it('soft-drains a busy HTTP/1.1 connection at max_connection_duration: closed once its request is answered', async () => {
    upstream ??= await startUpstream('slow');
    const config = bootstrap('softdrain', { http_filters: [ROUTER], common_http_protocol_options: { max_connection_duration: '0.2s' } }, [{ match: { prefix: '/' }, route: { cluster: 'slow', timeout: '0s' } }]);
    (config.static_resources as { clusters: object[] }).clusters.push(staticCluster('slow', upstream.port));
    const proxy = await startProxy(config, ['--concurrency', '1']);
    const socket = tcpConnect(proxy.ports.get('softdrain')!, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('GET /hold?key=softdrain HTTP/1.1\r\nhost: x\r\n\r\n');
    await waitFor('the request upstream', () => (upstream!.held('softdrain') === 1 ? true : undefined));
    await waitFor('the connection in soft drain', async () => ((await statOf(proxy.admin, 'http.softdrain.downstream_cx_http1_soft_drain')) === 1 ? true : undefined));
    assert.equal(await statOf(proxy.admin, 'http.softdrain.downstream_cx_max_duration_reached'), 1);
    upstream.release('softdrain');
    await closed;
    assert.match(answer, /^HTTP\/1\.1 200 [^]*slow held$/);
    await waitFor('the soft drain over', async () => ((await statOf(proxy.admin, 'http.softdrain.downstream_cx_http1_soft_drain')) === 0 ? true : undefined));
  });

  it('answers a stream open past max_stream_duration 408 (DT)', async () => {
    upstream ??= await startUpstream('slow');
    const config = bootstrap('maxstream', { http_filters: [ROUTER], common_http_protocol_options: { max_stream_duration: '0.2s' } }, [{ match: { prefix: '/' }, route: { cluster: 'slow', timeout: '0s' } }]);
    (config.static_resources as { clusters: object[] }).clusters.push(staticCluster('slow', upstream.port));
    const proxy = await startProxy(config, ['--concurrency', '1']);
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('maxstream')}/hold?key=forever`);
    assert.deepEqual([r.status, r.body], [408, 'downstream duration timeout']);
    assert.equal(await statOf(proxy.admin, 'http.maxstream.downstream_rq_max_duration_reached'), 1);
  });

  it('rejects or drops headers with underscores as headers_with_underscores_action says', async () => {
    const reject = await startProxy(bootstrap('under', { http_filters: [ROUTER], common_http_protocol_options: { headers_with_underscores_action: 'REJECT_REQUEST' } }), ['--concurrency', '1']);
    const refused = await rawExchange(reject.ports.get('under')!, 'GET / HTTP/1.1\r\nhost: x\r\nx_bad: 1\r\n\r\n');
    assert.match(refused, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal(await statOf(reject.admin, 'http1.requests_rejected_with_underscores_in_headers'), 1);
    const session = h2connect(`http://127.0.0.1:${reject.ports.get('under')}`);
    try {
      const s = session.request({ ':path': '/', x_bad: '1' });
      s.on('error', () => undefined);
      const code = await new Promise((resolve) => s.once('close', () => resolve(s.rstCode)));
      assert.equal(code, 1, 'reset with PROTOCOL_ERROR');
    } finally {
      session.destroy();
    }

    upstream ??= await startUpstream('slow');
    const config = bootstrap('drop', { http_filters: [ROUTER], common_http_protocol_options: { headers_with_underscores_action: 'DROP_HEADER' } }, [{ match: { prefix: '/' }, route: { cluster: 'up' } }]);
    (config.static_resources as { clusters: object[] }).clusters.push(staticCluster('up', upstream.port));
    const drop = await startProxy(config, ['--concurrency', '1']);
    const echoed = JSON.parse((await httpRequest(`http://127.0.0.1:${drop.ports.get('drop')}/echo`, { headers: { x_bad: '1', 'x-good': '2' } })).body);
    assert.deepEqual([echoed.headers.x_bad, echoed.headers['x-good']], [undefined, '2']);
    assert.equal(await statOf(drop.admin, 'http1.dropped_headers_with_underscores'), 1);
  });
});

describe('scheme_header_transformation', () => {
  const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };

  it("gives an HTTP/2 upstream the request's :scheme, scheme_to_overwrite's, or with match_upstream its own connection's", async () => {
    const seen: string[] = [];
    const server = createH2Server();
    server.on('stream', (stream: ServerHttp2Stream, headers) => {
      seen.push(String(headers[':scheme']));
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const up = (server.address() as { port: number }).port;
      const make = (name: string, hcm: object) => {
        const config = bootstrap(name, { http_filters: [ROUTER], codec_type: 'AUTO', ...hcm }, [{ match: { prefix: '/' }, route: { cluster: 'h2' } }]);
        (config.static_resources as { clusters: object[] }).clusters.push({ ...staticCluster('h2', up), http2_protocol_options: {} });
        return config;
      };
      /** An h2c request that says its scheme is https (as one behind a TLS terminator would). */
      const viaH2 = async (port: number) => {
        const session = h2connect(`http://127.0.0.1:${port}`);
        try {
          const s = session.request({ ':path': '/', ':scheme': 'https' });
          s.resume();
          await new Promise((resolve) => s.once('end', resolve));
        } finally {
          session.close();
        }
      };
      const plain = await startProxy(make('sch', {}), ['--concurrency', '1']);
      await httpRequest(`http://127.0.0.1:${plain.ports.get('sch')}/`);
      await viaH2(plain.ports.get('sch')!);
      const overwrite = await startProxy(make('schover', { scheme_header_transformation: { scheme_to_overwrite: 'https' } }), ['--concurrency', '1']);
      await httpRequest(`http://127.0.0.1:${overwrite.ports.get('schover')}/`);
      const match = await startProxy(make('schmatch', { scheme_header_transformation: { match_upstream: true } }), ['--concurrency', '1']);
      await viaH2(match.ports.get('schmatch')!);
      assert.deepEqual(seen, ['http', 'https', 'https', 'http']);
    } finally {
      server.close();
    }
  });
});

describe('upgrade requests', () => {
  const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
  it('refuses a WebSocket upgrade on a route that does not allow one as Envoy does (403, connection closed, counted); h2c offers and bare Upgrade headers are served', async () => {
    const proxy = await startProxy(bootstrap('upg', { http_filters: [ROUTER] }), ['--concurrency', '1']);
    const port = proxy.ports.get('upg')!;
    const ws = await rawExchange(port, 'GET /chat HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.match(ws, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(ws, /\r\nconnection: close\r\n/i);
    assert.equal(ws.match(/HTTP\/1\.1 /g)?.length, 1, 'nothing after the refused upgrade is read');
    assert.equal(await statValue(proxy, 'http.upg.downstream_rq_ws_on_non_ws_route'), 1);
    const h2c = await rawExchange(port, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: Upgrade, HTTP2-Settings, close\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAAQAAP__\r\n\r\n');
    assert.match(h2c, /^HTTP\/1\.1 200 OK\r\n/, 'an h2c offer is dropped and the request served, as Envoy\'s codec does');
    const bare = await rawExchange(port, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\nupgrade: websocket\r\n\r\n');
    assert.match(bare, /^HTTP\/1\.1 200 OK\r\n/, 'an Upgrade header that Connection does not name is no upgrade');
    assert.equal(await statValue(proxy, 'http.upg.downstream_rq_ws_on_non_ws_route'), 1);
  });
});
