import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { existsSync, readFileSync } from 'node:fs';
import { HCM_TYPE, loadErrors, routesListener, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { startEcho, startUpstream, type Upstream } from './helpers/upstream.js';
import { tempDir } from './helpers/cli.js';
import { downstreamTls, makePki, type TestPki } from './helpers/certs.js';
import { proxyV1Header, proxyV2Header } from '../shared/network/proxy-protocol.js';

/**
 * The PROXY protocol listener filter through the proxy, as Envoy's proxy_proto_integration_test
 * drives it: a client that speaks for another (a load balancer) sends a header first; the
 * connection then has the addresses it names (access logs, x-forwarded-for, the TCP proxy's log,
 * TLV metadata), TLS and the TLS inspector read what follows it, and what is malformed or
 * disallowed is closed and counted as Envoy counts it.
 */

const PROXY_PROTOCOL = 'type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol';
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

const ppFilter = (config: object = {}) => ({ name: 'envoy.filters.listener.proxy_protocol', typed_config: { '@type': PROXY_PROTOCOL, ...config } });
const authorityRule = { rules: [{ tlv_type: 0x02, on_tlv_present: { key: 'PP2TypeAuthority' } }] };

/** A raw exchange: `first` (a PROXY header, say) then `rest`, and what comes back until the proxy closes. */
function exchange(port: number, bytes: Buffer): Promise<{ reply: string; closed: boolean }> {
  return withDeadline('a raw exchange', new Promise((resolve) => {
    const s: Socket = connect(port, '127.0.0.1');
    let reply = '';
    s.on('data', (d) => {
      reply += d.toString('latin1');
      // One HTTP response whole: enough.
      if (/\r\n\r\n/.test(reply) && /content-length: (\d+)/i.test(reply)) {
        const length = Number(/content-length: (\d+)/i.exec(reply)![1]);
        if (reply.length - reply.indexOf('\r\n\r\n') - 4 >= length) {
          s.destroy();
          resolve({ reply, closed: false });
        }
      }
    });
    s.on('error', () => undefined);
    s.on('close', () => resolve({ reply, closed: true }));
    s.write(bytes);
  }));
}

const get = (path: string, extra = '') => Buffer.from(`GET ${path} HTTP/1.1\r\nhost: a.example\r\n${extra}connection: close\r\n\r\n`);
const tlv = (type: number, value: string) => ({ type, value: Buffer.from(value) });

describe('the proxy_protocol listener filter', () => {
  let upstream: Upstream;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  let proxy: RunningProxy;
  let pki: TestPki;
  const tmp = tempDir('proxy-protocol-');
  const logs = { http: `${tmp.dir}/http.log`, tcp: `${tmp.dir}/tcp.log`, listener: `${tmp.dir}/listener.log` };
  const port = (name: string) => proxy.ports.get(name)!;
  const logLines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

  before(async () => {
    upstream = await startUpstream('U');
    echo = await startEcho();
    pki = makePki();
    const leaf = pki.leaf('pp.example', { sans: ['DNS:pp.example'], serial: '51' });
    const echoRoute = [{ match: { prefix: '/' }, route: { cluster: 'backend' } }];
    const http = routesListener('pp', echoRoute, 0, {
      hcm: {
        use_remote_address: true,
        access_log: [{ name: 'log', typed_config: { '@type': FILE_LOG, path: logs.http, format: '%DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_REMOTE_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS%\n' } }],
      },
    });
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          { ...http, listener_filters: [ppFilter(authorityRule)] },
          { ...routesListener('optional', echoRoute), listener_filters: [ppFilter({ allow_requests_without_proxy_protocol: true, stat_prefix: 'optional' })] },
          { ...routesListener('v2only', echoRoute), listener_filters: [ppFilter({ disallowed_versions: ['V1'], stat_prefix: 'v2only' })] },
          {
            name: 'tcp',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            listener_filters: [ppFilter(authorityRule)],
            filter_chains: [{ filters: [{ name: 'tcp', typed_config: {
              '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'echo',
              access_log: [{ name: 'log', typed_config: { '@type': FILE_LOG, path: logs.tcp, format: 'remote=%DOWNSTREAM_REMOTE_ADDRESS% direct=%DOWNSTREAM_DIRECT_REMOTE_ADDRESS% local=%DOWNSTREAM_LOCAL_ADDRESS% authority=%DYNAMIC_METADATA(envoy.filters.listener.proxy_protocol:PP2TypeAuthority)%\n' } }],
            } }] }],
          },
          {
            // The chains differ by server name: the TLS inspector reads the ClientHello after the PROXY header.
            name: 'tls',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            listener_filters: [ppFilter()],
            access_log: [{ name: 'nr', typed_config: { '@type': FILE_LOG, path: logs.listener, format: '%DOWNSTREAM_REMOTE_ADDRESS% %RESPONSE_FLAGS%\n' } }],
            filter_chains: [
              { filter_chain_match: { server_names: ['pp.example'] }, transport_socket: downstreamTls(leaf), filters: [(routesListener('tls', echoRoute, 0, { hcm: { use_remote_address: true } }).filter_chains as { filters: object[] }[])[0]!.filters[0]!] },
            ],
          },
        ],
        clusters: [staticCluster('backend', upstream.port), staticCluster('echo', echo.port)],
      },
    }, ['--concurrency', '1', '--file-flush-interval-msec', '50']);
  });

  after(async () => {
    await stopAllProxies();
    await upstream.close();
    echo.server.close();
    pki.remove();
    tmp.cleanup();
  });

  it('a version 1 header: the client it names is the remote address; the peer stays the direct one', async () => {
    const header = proxyV1Header({ ip: '1.2.3.4', port: 12345 }, { ip: '254.254.254.254', port: 1234 });
    const { reply } = await exchange(port('pp'), Buffer.concat([header, get('/echo')]));
    assert.match(reply, /^HTTP\/1\.1 200/);
    const echoed = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { headers: Record<string, string> };
    assert.equal(echoed.headers['x-forwarded-for'], '1.2.3.4');
    assert.equal(echoed.headers['x-envoy-external-address'], '1.2.3.4');
    const line = await waitFor('the access log line', () => logLines(logs.http)[0]);
    assert.equal(line, '127.0.0.1 1.2.3.4:12345 254.254.254.254:1234');
    assert.equal(await statValue(proxy, 'proxy_proto.versions.v1.found'), 1);
  });

  it('a version 2 header with TLVs before a TCP proxy: its addresses and TLV metadata are in the log', async () => {
    const header = proxyV2Header({ ip: '2001:db8::7', port: 4000 }, { ip: '2001:db8::1', port: 443 }, [tlv(0x02, 'foo.com'), tlv(0x05, 'id')])!;
    const s = connect(port('tcp'), '127.0.0.1');
    s.write(Buffer.concat([header, Buffer.from('ping')]));
    let got = '';
    await withDeadline('the echo', new Promise<void>((resolve) => s.on('data', (d) => {
      got += d;
      if (got === 'ping') resolve();
    })));
    s.destroy();
    const line = await waitFor('the TCP proxy log line', () => logLines(logs.tcp)[0]);
    assert.equal(line, 'remote=[2001:db8::7]:4000 direct=' + line.split('direct=')[1]!.split(' ')[0] + ' local=[2001:db8::1]:443 authority=foo.com');
    assert.match(line, /direct=127\.0\.0\.1:\d+ /);
    assert.equal(await statValue(proxy, 'proxy_proto.versions.v2.found'), 1);
  });

  it('TLS after the header, its ClientHello read by the TLS inspector for the chain', async () => {
    const raw = connect(port('tls'), '127.0.0.1');
    await withDeadline('connect', new Promise((resolve) => raw.once('connect', resolve)));
    raw.write(proxyV2Header({ ip: '198.51.100.9', port: 555 }, { ip: '192.0.2.80', port: 443 }, [])!);
    const secure = tlsConnect({ socket: raw, servername: 'pp.example', ca: pki.ca });
    await withDeadline('the handshake', new Promise((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject)));
    secure.write(get('/echo'));
    let reply = '';
    await withDeadline('the response', new Promise<void>((resolve) => {
      secure.on('data', (d) => (reply += d));
      secure.on('end', () => resolve());
    }));
    secure.destroy();
    const echoed = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { headers: Record<string, string> };
    assert.equal(echoed.headers['x-forwarded-for'], '198.51.100.9');
    assert.equal(echoed.headers['x-forwarded-proto'], 'https');
  });

  it('a connection no chain takes is logged with the header\'s client', async () => {
    const raw = connect(port('tls'), '127.0.0.1');
    await withDeadline('connect', new Promise((resolve) => raw.once('connect', resolve)));
    raw.write(proxyV1Header({ ip: '203.0.113.3', port: 7 }, { ip: '192.0.2.80', port: 443 }));
    const secure = tlsConnect({ socket: raw, servername: 'other.example', ca: pki.ca });
    await withDeadline('refused', new Promise((resolve) => secure.once('error', resolve).once('close', resolve)));
    assert.equal(await waitFor('the listener log line', () => logLines(logs.listener)[0]), '203.0.113.3:7 NR');
  });

  it('without a header the connection is closed and counted, unless headers are optional', async () => {
    const refused = await exchange(port('pp'), get('/echo'));
    assert.deepEqual(refused, { reply: '', closed: true });
    assert.equal(await statValue(proxy, 'proxy_proto.not_found_disallowed'), 1);
    assert.equal(await statValue(proxy, 'downstream_cx_proxy_proto_error'), 1);
    const plain = await exchange(port('optional'), get('/'));
    assert.match(plain.reply, /^HTTP\/1\.1 200/);
    assert.equal(await statValue(proxy, 'proxy_proto.optional.not_found_allowed'), 1);
    const withHeader = await exchange(port('optional'), Buffer.concat([proxyV1Header({ ip: '1.2.3.4', port: 1 }, { ip: '5.6.7.8', port: 2 }), get('/')]));
    assert.match(withHeader.reply, /^HTTP\/1\.1 200/);
    assert.equal(await statValue(proxy, 'proxy_proto.optional.versions.v1.found'), 1);
  });

  it('a malformed header and a disallowed version are closed, counted by version', async () => {
    const bad = await exchange(port('pp'), Buffer.concat([Buffer.from('PROXY TCP4 1.2.3.4 5.6.7.8 66776 80\r\n'), get('/')]));
    assert.deepEqual(bad, { reply: '', closed: true });
    assert.equal(await statValue(proxy, 'proxy_proto.versions.v1.error'), 1);
    assert.equal(await statValue(proxy, 'downstream_cx_proxy_proto_error'), 2);
    const denied = await exchange(port('v2only'), Buffer.concat([proxyV1Header({ ip: '1.2.3.4', port: 1 }, { ip: '5.6.7.8', port: 2 }), get('/')]));
    assert.deepEqual(denied, { reply: '', closed: true });
    assert.equal(await statValue(proxy, 'proxy_proto.v2only.versions.v1.found'), 1);
    assert.equal(await statValue(proxy, 'proxy_proto.v2only.versions.v1.disallowed'), 1);
    // Denied is not an error (Envoy's legacy counter counts errors only).
    assert.equal(await statValue(proxy, 'downstream_cx_proxy_proto_error'), 2);
    const accepted = await exchange(port('v2only'), Buffer.concat([proxyV2Header({ ip: '1.2.3.4', port: 1 }, { ip: '5.6.7.8', port: 2 }, [])!, get('/')]));
    assert.match(accepted.reply, /^HTTP\/1\.1 200/);
  });

  it('a header sent a byte at a time', async () => {
    const bytes = Buffer.concat([proxyV1Header({ ip: '9.9.9.9', port: 9 }, { ip: '5.6.7.8', port: 2 }), get('/echo')]);
    const s = connect(port('pp'), '127.0.0.1');
    s.setNoDelay(true);
    let reply = '';
    s.on('data', (d) => (reply += d));
    for (const b of bytes.subarray(0, 40)) {
      s.write(Buffer.from([b]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    s.write(bytes.subarray(40));
    await withDeadline('the response', new Promise((resolve) => s.on('close', resolve)));
    assert.match(reply, /"x-forwarded-for":"9\.9\.9\.9"/);
  });
});

describe('proxy_protocol configuration', () => {
  const bootstrap = (config: object) => ({
    static_resources: {
      listeners: [{
        name: 'l',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        listener_filters: [ppFilter(config)],
        filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: 'l', route_config: {}, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }] } }] }],
      }],
    },
  });
  const messages = (config: object) => loadErrors(bootstrap(config)).map(String);

  it('refuses what Envoy refuses, in its words, and filter state by name', () => {
    assert.deepEqual(messages({}), []);
    assert.match(messages({ disallowed_versions: ['V1', 'V2'] }).join('\n'), /disallowed_versions: Proxy Protocol filter is misconfigured: all proxy protocol versions are disallowed\./);
    assert.match(messages({ tlv_location: 'FILTER_STATE' }).join('\n'), /tlv_location: FILTER_STATE is not supported by this proxy/);
    assert.deepEqual(messages({ tlv_location: 'DYNAMIC_METADATA', pass_through_tlvs: { match_type: 'INCLUDE', tlv_type: [5] }, ...authorityRule }), []);
    assert.match(messages({ rules: [{ tlv_type: 300, on_tlv_present: { key: 'k' } }] }).join('\n'), /tlv_type/);
  });
});
