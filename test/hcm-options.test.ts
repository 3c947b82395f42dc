import assert from 'node:assert/strict';
import { connect as h2connect, createServer as createH2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';
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
    assert.match(out.stderr, /clusters\[0\]\.http2_protocol_options\.allow_connect: CONNECT is not proxied to upstreams by this proxy/);
  });
});
