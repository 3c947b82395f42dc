import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createH2Server } from 'node:http2';
import { loadErrors, routesListener, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { TLSSocket } from 'node:tls';
import { Duplex } from 'node:stream';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { proxyV2Header, readProxyHeader, type ReadResult } from '../shared/network/proxy-protocol.js';

/**
 * The upstream PROXY protocol transport socket, as Envoy's proxy_protocol_integration_test drives
 * it: a TCP proxy's upstream connection begins with a header naming the downstream client; an HTTP
 * cluster's carries the downstream's TLVs that pass_through_tlvs keeps and added_tlvs; different
 * downstreams never share an upstream connection; a health check's connection sends LOCAL.
 */

const UPSTREAM_PP = 'type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport';
const LISTENER_PP = 'type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol';
const RAW = { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } };
const proxied = (config: object) => ({ transport_socket: { name: 'envoy.transport_sockets.upstream_proxy_protocol', typed_config: { '@type': UPSTREAM_PP, config, transport_socket: RAW } } });

type Done = Extract<ReadResult, { state: 'done' }>;

const tlv = (type: number, value: string) => ({ type, value: Buffer.from(value).toString('base64') });
/** A cluster whose endpoint has TLVs of its own (PerHostConfig in its typed metadata): one overrides what passes through, one the cluster's. */
function perHost(cluster: Record<string, unknown>) {
  const perHostTlvs = { '@type': 'type.googleapis.com/envoy.config.core.v3.PerHostConfig', added_tlvs: [tlv(6, 'host six'), tlv(0x10, 'host'), tlv(0x11, 'h'), tlv(0x11, 'h again')] };
  const assignment = cluster.load_assignment as { endpoints: { lb_endpoints: Record<string, unknown>[] }[] };
  assignment.endpoints[0]!.lb_endpoints[0]!.metadata = { typed_filter_metadata: { 'envoy.transport_sockets.proxy_protocol': perHostTlvs } };
  return cluster;
}

/** A server that reads each connection's PROXY header, then hands the rest to `then` (an HTTP server, or an echo). */
function headerServer(then: (socket: Socket) => void): Promise<{ port: number; headers: Done[]; server: Server }> {
  const headers: Done[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    let data = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const r = readProxyHeader(data, { allowV1: true, allowV2: true, allowAbsent: false });
      if (r.state === 'more') return;
      socket.off('data', onData);
      if (r.state !== 'done') return void socket.destroy();
      headers.push(r);
      socket.pause();
      socket.unshift(data.subarray(r.length));
      then(socket);
      socket.resume();
    };
    socket.on('data', onData);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, headers, server })));
}

describe('the upstream PROXY protocol transport socket', () => {
  let tcpUpstream: Awaited<ReturnType<typeof headerServer>>;
  let httpUpstream: Awaited<ReturnType<typeof headerServer>>;
  let tlsUpstream: Awaited<ReturnType<typeof headerServer>>;
  let h2Upstream: Awaited<ReturnType<typeof headerServer>>;
  let tunnelUpstream: Awaited<ReturnType<typeof headerServer>>;
  const h2 = createH2Server((_req, res) => res.end('h2'));
  let pki: TestPki;
  let proxy: RunningProxy;
  const http = createHttpServer((req, res) => {
    if (req.url === '/healthz') return void res.end('ok');
    res.end(`${req.socket.remotePort}`);
  });

  before(async () => {
    tcpUpstream = await headerServer((s) => s.pipe(s));
    httpUpstream = await headerServer((s) => http.emit('connection', s));
    h2Upstream = await headerServer((s) => h2.emit('connection', s));
    // A CONNECT terminator: answers the request 200, then echoes what the tunnel carries.
    tunnelUpstream = await headerServer((s) => {
      let head = '';
      const onHead = (d: Buffer) => {
        head += d.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        s.off('data', onHead);
        s.write('HTTP/1.1 200 OK\r\n\r\n');
        const rest = Buffer.from(head.slice(end + 4), 'latin1');
        if (rest.length) s.write(rest);
        s.pipe(s);
      };
      s.on('data', onHead);
    });
    pki = makePki();
    const leaf = pki.leaf('tls-upstream', { sans: ['DNS:tls-upstream'], serial: '61' });
    // TLS after the header: the handshake reads what follows it.
    tlsUpstream = await headerServer((s) => {
      // Over a stream, not the socket's handle: the ClientHello may be in what the header's read put back.
      const secure = new TLSSocket(Duplex.from({ readable: s, writable: s }) as unknown as Socket, { isServer: true, key: leaf.key, cert: leaf.cert });
      secure.on('error', () => s.destroy());
      secure.pipe(secure);
    });
    const overTls = { transport_socket: { name: 'pp', typed_config: { '@type': UPSTREAM_PP, config: { version: 'V2' }, transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE } } } } };
    const cluster = (name: string, port: number, config: object, extra: object = {}) => ({ ...staticCluster(name, port), ...proxied(config), ...extra });
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          {
            name: 'tcp',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'tcp-v1' } }] }],
          },
          {
            name: 'tunnel',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tunnel', cluster: 'tunnel', tunneling_config: { hostname: 'example.com:443' } } }] }],
          },
          {
            name: 'tcp-tls',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [{ filters: [{ name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp_tls', cluster: 'over-tls' } }] }],
          },
          {
            ...routesListener('web', [
              { match: { prefix: '/checked' }, route: { cluster: 'checked' } },
              { match: { prefix: '/h2' }, route: { cluster: 'h2' } },
              { match: { prefix: '/per-host' }, route: { cluster: 'per-host' } },
              { match: { prefix: '/' }, route: { cluster: 'http-v2' } },
            ]),
            listener_filters: [{ name: 'envoy.filters.listener.proxy_protocol', typed_config: { '@type': LISTENER_PP, pass_through_tlvs: { match_type: 'INCLUDE', tlv_type: [5, 6] } } }],
          },
        ],
        clusters: [
          cluster('tcp-v1', tcpUpstream.port, { version: 'V1' }),
          cluster('tunnel', tunnelUpstream.port, { version: 'V2' }),
          { ...staticCluster('over-tls', tlsUpstream.port), ...overTls },
          cluster('h2', h2Upstream.port, { version: 'V1' }, { http2_protocol_options: {} }),
          cluster('http-v2', httpUpstream.port, { version: 'V2', pass_through_tlvs: { match_type: 'INCLUDE', tlv_type: [6] }, added_tlvs: [{ type: 0x10, value: Buffer.from('added').toString('base64') }] }),
          perHost(cluster('per-host', httpUpstream.port, { version: 'V2', pass_through_tlvs: { match_type: 'INCLUDE', tlv_type: [5, 6] }, added_tlvs: [tlv(0x10, 'cluster'), tlv(0x12, 'c'), tlv(0x12, 'c again')] })),
          cluster('checked', httpUpstream.port, { version: 'V2' }, {
            health_checks: [{ timeout: '1s', interval: '0.2s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } }],
          }),
        ],
      },
    }, ['--concurrency', '1']);
  });

  after(async () => {
    await stopAllProxies();
    tcpUpstream.server.close();
    httpUpstream.server.close();
    tlsUpstream.server.close();
    h2Upstream.server.close();
    tunnelUpstream.server.close();
    h2.close();
    http.close();
    pki.remove();
  });

  it('a TCP proxy\'s connection names the downstream client and the listener (version 1)', async () => {
    const s = connect(proxy.ports.get('tcp')!, '127.0.0.1');
    await withDeadline('connect', new Promise((resolve) => s.once('connect', resolve)));
    s.write('ping');
    await withDeadline('the echo', new Promise<void>((resolve) => s.once('data', () => resolve())));
    const h = tcpUpstream.headers[0]!;
    assert.equal(h.version, 'v1');
    assert.deepEqual([h.source, h.destination], [{ ip: '127.0.0.1', port: s.localPort }, { ip: '127.0.0.1', port: proxy.ports.get('tcp') }]);
    s.destroy();
  });

  it('a TCP proxy\'s HTTP tunnel names the downstream too (version 2)', async () => {
    const s = connect(proxy.ports.get('tunnel')!, '127.0.0.1');
    await withDeadline('connect', new Promise((resolve) => s.once('connect', resolve)));
    s.write('through the tunnel');
    let got = '';
    await withDeadline('the echo', new Promise<void>((resolve) => s.on('data', (d) => {
      got += d;
      if (got === 'through the tunnel') resolve();
    })));
    const h = tunnelUpstream.headers[0]!;
    assert.equal(h.local, false);
    assert.deepEqual([h.source, h.destination], [{ ip: '127.0.0.1', port: s.localPort }, { ip: '127.0.0.1', port: proxy.ports.get('tunnel') }]);
    s.destroy();
  });

  it('over TLS, the header goes before the handshake', async () => {
    const s = connect(proxy.ports.get('tcp-tls')!, '127.0.0.1');
    await withDeadline('connect', new Promise((resolve) => s.once('connect', resolve)));
    s.write('over tls');
    let got = '';
    await withDeadline('the echo through TLS', new Promise<void>((resolve) => s.on('data', (d) => {
      got += d;
      if (got === 'over tls') resolve();
    })));
    assert.deepEqual(tlsUpstream.headers[0]!.source, { ip: '127.0.0.1', port: s.localPort });
    s.destroy();
  });

  it('an HTTP cluster\'s connection (version 2) names the client a PROXY header named, with kept and added TLVs; each downstream its own', async () => {
    const send = (client: string, port: number) => {
      const s = connect(proxy.ports.get('web')!, '127.0.0.1');
      const tlvs = [{ type: 5, value: Buffer.from('five') }, { type: 6, value: Buffer.from('six') }, { type: 7, value: Buffer.from('seven') }];
      s.write(Buffer.concat([proxyV2Header({ ip: client, port }, { ip: '192.0.2.1', port: 443 }, tlvs)!, Buffer.from('GET /a HTTP/1.1\r\nhost: x\r\n\r\nGET /b HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')]));
      let reply = '';
      s.on('data', (d) => (reply += d));
      return withDeadline('two responses', new Promise<string>((resolve) => s.on('close', () => resolve(reply))));
    };
    const [one, two] = await Promise.all([send('198.51.100.1', 1111), send('198.51.100.2', 2222)]);
    assert.equal(one.match(/HTTP\/1\.1 200/g)?.length, 2);
    assert.equal(two.match(/HTTP\/1\.1 200/g)?.length, 2);
    const fromClients = httpUpstream.headers.filter((h) => !h.local);
    // One upstream connection per downstream origin, its requests sharing it.
    assert.deepEqual(fromClients.map((h) => h.source).sort((a, b) => a!.port - b!.port), [{ ip: '198.51.100.1', port: 1111 }, { ip: '198.51.100.2', port: 2222 }]);
    for (const h of fromClients) {
      assert.deepEqual(h.destination, { ip: '192.0.2.1', port: 443 });
      assert.deepEqual(h.tlvs.map((t) => [t.type, t.value.toString()]), [[6, 'six'], [0x10, 'added']]);
    }
  });

  it('an endpoint\'s own TLVs win over the cluster\'s, which win over what passes through (the first of a type at each level)', async () => {
    const s = connect(proxy.ports.get('web')!, '127.0.0.1');
    const tlvs = [{ type: 5, value: Buffer.from('five') }, { type: 6, value: Buffer.from('six') }];
    s.write(Buffer.concat([proxyV2Header({ ip: '198.51.100.9', port: 9999 }, { ip: '192.0.2.1', port: 443 }, tlvs)!, Buffer.from('GET /per-host HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')]));
    let reply = '';
    s.on('data', (d) => (reply += d));
    await withDeadline('the response', new Promise((resolve) => s.on('close', resolve)));
    assert.match(reply, /^HTTP\/1\.1 200/);
    const h = httpUpstream.headers.find((x) => x.source?.port === 9999)!;
    assert.deepEqual(h.tlvs.map((t) => [t.type, t.value.toString()]), [[5, 'five'], [6, 'host six'], [0x10, 'host'], [0x11, 'h'], [0x12, 'c']]);
  });

  it('an HTTP/2 cluster\'s session begins with the header of its downstream', async () => {
    const s = connect(proxy.ports.get('web')!, '127.0.0.1');
    s.write(Buffer.concat([proxyV2Header({ ip: '203.0.113.5', port: 5555 }, { ip: '192.0.2.1', port: 80 }, [])!, Buffer.from('GET /h2 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')]));
    let reply = '';
    s.on('data', (d) => (reply += d));
    await withDeadline('the response', new Promise((resolve) => s.on('close', resolve)));
    assert.match(reply, /^HTTP\/1\.1 200[\s\S]*\r\nh2\r\n/);
    assert.deepEqual(h2Upstream.headers.map((h) => [h.version, h.source]), [['v1', { ip: '203.0.113.5', port: 5555 }]]);
  });

  it('a health check\'s connection sends LOCAL (no downstream)', async () => {
    await waitFor('a health check', () => httpUpstream.headers.find((h) => h.local));
    // The check passed: the upstream read the header, then the GET.
    assert.ok(await waitFor('a passing check', async () => ((await statValue(proxy, 'cluster.checked.health_check.success')) > 0 ? true : undefined)));
  });
});

describe('upstream_proxy_protocol configuration', () => {
  const bootstrap = (socket: object) => ({ static_resources: { clusters: [{ ...staticCluster('c', 1), transport_socket: { name: 'pp', typed_config: { '@type': UPSTREAM_PP, transport_socket: RAW, ...socket } } }] } });
  const messages = (socket: object) => loadErrors(bootstrap(socket)).map(String).join('\n');

  it('refuses what it does not do, by name', () => {
    assert.equal(messages({ config: { version: 'V2' } }), '');
    assert.match(messages({ config: { added_tlvs: [{ type: 1, format_string: { text_format_source: { inline_string: '%START_TIME%' } } }] } }), /format_string: TLVs from a format string are not supported/);
    assert.match(messages({ allow_unspecified_address: true }), /allow_unspecified_address/);
    assert.match(messages({ tlv_as_pool_key: true }), /tlv_as_pool_key/);
  });

  it('checks an endpoint\'s own TLVs', () => {
    const withHostTlvs = (typed: object) => {
      const c = staticCluster('c', 1) as { load_assignment: { endpoints: { lb_endpoints: Record<string, unknown>[] }[] } };
      c.load_assignment.endpoints[0]!.lb_endpoints[0]!.metadata = { typed_filter_metadata: { 'envoy.transport_sockets.proxy_protocol': typed } };
      return loadErrors({ static_resources: { clusters: [c] } }).map(String).join('\n');
    };
    const PER_HOST = 'type.googleapis.com/envoy.config.core.v3.PerHostConfig';
    assert.equal(withHostTlvs({ '@type': PER_HOST, added_tlvs: [tlv(1, 'x')] }), '');
    assert.match(withHostTlvs({ '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} }), /lb_endpoints\[0\]\.metadata\.typed_filter_metadata\['envoy\.transport_sockets\.proxy_protocol'\]: an endpoint's PROXY protocol TLVs are a envoy\.config\.core\.v3\.PerHostConfig/);
    assert.match(withHostTlvs({ '@type': PER_HOST, added_tlvs: [{ type: 1, format_string: { text_format_source: { inline_string: '%START_TIME%' } } }] }), /added_tlvs\[0\]\.format_string: an endpoint's TLVs take a value/);
    assert.match(withHostTlvs({ '@type': PER_HOST, added_tlvs: [{ type: 1 }] }), /added_tlvs\[0\]\.value: a TLV needs a value/);
  });
});
