import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { connect as h2connect, constants as h2constants } from 'node:http2';
import { connect, createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE, staticCluster } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { xxHash64 } from '../shared/hashing.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Some of Envoy's standard figures move when what they count happens (the catalogue test only
 * finds them): a DNS cluster's update_* at each resolution, CDS's config_reload and version at a
 * new version, the router's internal/external split, the ring's size, the TLS inspector's finds.
 */

const tmp = tempDir();
let proxy: RunningProxy;
let upstream: Upstream;
const cdsPath = join(tmp.dir, 'cds.json');
// Written aside and moved into place, as Envoy's file subscriptions expect (a move is what they watch).
const cds = (version: string) => {
  writeFileSync(`${cdsPath}.next`, JSON.stringify({ version_info: version, resources: [{ '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', ...staticCluster('discovered', upstream.port) }] }));
  renameSync(`${cdsPath}.next`, cdsPath);
};

/** An upstream that answers anything with bytes that are not HTTP. */
let garbage: NetServer;

before(async () => {
  upstream = await startUpstream('figures');
  garbage = createNetServer((s) => s.once('data', () => s.end('NOT HTTP AT ALL\r\n\r\n')));
  await new Promise<void>((r) => garbage.listen(0, '127.0.0.1', r));
  cds('v1');
  const hcm = {
    name: 'hcm',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: 'web',
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [
        { match: { prefix: '/ring' }, route: { cluster: 'ring' } },
        { match: { prefix: '/garbage' }, route: { cluster: 'garbage' } },
        { match: { prefix: '/' }, route: { cluster: 'dns' } },
      ] }] },
      http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
      access_log: [{ name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: join(tmp.dir, 'access.log') } }],
      // A client forwarded by one proxy from 10/8 is internal (x-forwarded-for holds its one address).
      internal_address_config: { cidr_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] },
    },
  };
  proxy = await startProxy(
    {
      stats_flush_on_admin: true,
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] },
      dynamic_resources: { cds_config: { path_config_source: { path: cdsPath }, resource_api_version: 'V3' } },
      static_resources: {
        listeners: [{
          name: 'web',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          listener_filters: [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }],
          filter_chains: [{ filter_chain_match: { transport_protocol: 'raw_buffer' }, filters: [hcm] }],
        }],
        clusters: [
          { ...staticCluster('dns', upstream.port), type: 'STRICT_DNS', dns_refresh_rate: '0.1s', dns_lookup_family: 'V4_ONLY', load_assignment: { cluster_name: 'dns', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'localhost', port_value: upstream.port } } } }] }] } },
          { ...staticCluster('ring', [upstream.port]), lb_policy: 'RING_HASH' },
          staticCluster('garbage', (garbage.address() as AddressInfo).port),
        ],
      },
    },
    // Access-log files flushed every 100 ms (Envoy's --file-flush-interval-msec).
    ['--concurrency', '1', '--file-flush-interval-msec', '100'],
  );
});

after(async () => {
  await stopAllProxies();
  garbage.close();
  await upstream.close();
  tmp.cleanup();
});

const stat = async (name: string): Promise<number> => {
  const body = (await httpRequest(`http://${proxy.admin}/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`)).body;
  return Number(/: (.*)$/m.exec(body)?.[1]);
};

describe("Envoy's standard figures, moving", () => {
  it("counts a DNS cluster's resolutions as updates: attempts, successes, and the ones that changed no host", async () => {
    const first = await stat('cluster.dns.update_attempt');
    await waitFor('three more resolutions', async () => ((await stat('cluster.dns.update_attempt')) >= first + 3 ? true : undefined));
    assert.ok((await stat('cluster.dns.update_success')) >= first + 2);
    assert.ok((await stat('cluster.dns.update_no_rebuild')) >= 2, 'localhost keeps its address');
    assert.equal(await stat('cluster.dns.update_failure'), 0);
    assert.equal(await stat('cluster.dns.warming_state'), 0);
  });

  it("counts a new CDS version as a config reload, with its time and Envoy's version hash", async () => {
    assert.equal(await stat('cluster_manager.cds.config_reload'), 1);
    const version = await stat('cluster_manager.cds.version');
    assert.ok(version > 0);
    const reloadedAt = await stat('cluster_manager.cds.config_reload_time_ms');
    assert.ok(Math.abs(reloadedAt - Date.now()) < 600_000, 'a time in ms since the epoch');
    cds('v2');
    await waitFor('the new version applied', async () => ((await stat('cluster_manager.cds.config_reload')) === 2 ? true : undefined));
    assert.notEqual(await stat('cluster_manager.cds.version'), version);
    // The 64-bit hash to the last digit, in every format (a double would round it: 2^53 is 16 digits).
    const exact = xxHash64('v2').toString();
    assert.ok(exact.length > 16, exact);
    const admin = `http://${proxy.admin}`;
    assert.match((await httpRequest(`${admin}/stats?filter=^cluster_manager\\.cds\\.version$`)).body, new RegExp(`^cluster_manager\\.cds\\.version: ${exact}$`, 'm'));
    assert.match((await httpRequest(`${admin}/stats?format=json&filter=^cluster_manager\\.cds\\.version$`)).body, new RegExp(`"value":${exact}\\b`));
    assert.match((await httpRequest(`${admin}/stats/prometheus`)).body, new RegExp(`^envoy_cluster_manager_cds_version\\{\\} ${exact}$`, 'm'));
    assert.ok((await stat('cluster_manager.cds.config_reload_time_ms')) >= reloadedAt);
  });

  it("splits the router's response codes into internal and external, and counts what it routed", async () => {
    const url = `http://127.0.0.1:${proxy.ports.get('web')}/`;
    const routed = await stat('http.web.rq_total');
    await httpRequest(url);
    // An internal client (internal_address_config), and one that only claims to be.
    await httpRequest(url, { headers: { 'x-forwarded-for': '10.1.2.3' } });
    await httpRequest(url, { headers: { 'x-forwarded-for': '10.1.2.3' } });
    await httpRequest(url, { headers: { 'x-envoy-internal': 'true' } });
    assert.equal(await stat('cluster.dns.internal.upstream_rq_200'), 2);
    assert.equal(await stat('cluster.dns.internal.upstream_rq_2xx'), 2);
    assert.equal(await stat('cluster.dns.external.upstream_rq_completed'), 2);
    assert.equal(await stat('http.web.rq_total'), routed + 4);
  });

  it('answers a path that is not relative with 404, counted as Envoy counts it', async () => {
    const socket = connect(proxy.ports.get('web')!, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d));
    socket.write('OPTIONS * HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    await once(socket, 'close');
    assert.match(answer, /^HTTP\/1\.1 404 /);
    assert.equal(await stat('http.web.downstream_rq_non_relative_path'), 1);
  });

  it('counts a connection the client closed with a request in flight, and per user agent', async () => {
    const socket = connect(proxy.ports.get('web')!, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /hold?key=gone HTTP/1.1\r\nhost: x\r\nuser-agent: App/1.0 (iOS 17.1)\r\n\r\n');
    await waitFor('the request held upstream', () => (upstream.held('gone') === 1 ? true : undefined));
    socket.end();
    await waitFor('the connection counted', async () => ((await stat('http.web.downstream_cx_destroy_remote_active_rq')) === 1 ? true : undefined));
    assert.equal(await stat('http.web.downstream_cx_destroy_active_rq'), 1);
    assert.equal(await stat('http.web.downstream_cx_destroy_local_active_rq'), 0);
    assert.equal(await stat('http.web.user_agent.ios.downstream_cx_total'), 1);
    assert.equal(await stat('http.web.user_agent.ios.downstream_rq_total'), 1);
    assert.equal(await stat('http.web.user_agent.ios.downstream_cx_destroy_remote_active_rq'), 1);
    upstream.release('gone');
  });

  it("counts the access log's writes as Envoy's file writer does (filesystem.*)", async () => {
    const buffered = await stat('filesystem.write_buffered');
    for (let i = 0; i < 3; i++) await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/`);
    assert.equal(await stat('filesystem.write_buffered'), buffered + 3, 'a line each');
    await waitFor('the timer to flush them', async () => ((await stat('filesystem.write_total_buffered')) === 0 ? true : undefined));
    assert.ok((await stat('filesystem.flushed_by_timer')) >= 1);
    assert.ok((await stat('filesystem.write_completed')) >= 1);
    assert.equal(await stat('filesystem.write_failed'), 0);
    assert.equal(readFileSync(join(tmp.dir, 'access.log'), 'utf8').split('\n').filter(Boolean).length >= 3, true);
  });

  it("counts HTTP/2 streams, their trailers and the client's resets in Envoy's codec figures (http2.*)", async () => {
    const session = h2connect(`http://127.0.0.1:${proxy.ports.get('web')}`);
    // The codec's figures are made with its first connection: read them once the session is up.
    await new Promise<void>((resolve, reject) => session.once('remoteSettings', () => resolve()).once('error', reject));
    await waitFor('the codec figures', async () => (Number.isNaN(await stat('http2.trailers')) ? undefined : true));
    const [trailers, resets] = [await stat('http2.trailers'), await stat('http2.rx_reset')];
    await new Promise<void>((resolve, reject) => {
      const rq = session.request({ ':method': 'POST', ':path': '/echo' }, { waitForTrailers: true });
      rq.on('wantTrailers', () => rq.sendTrailers({ 'x-checksum': 'abc' }));
      rq.on('response', () => rq.resume());
      rq.once('end', resolve).once('error', reject);
      rq.end('body');
    });
    const held = session.request({ ':path': '/hold?key=h2' });
    held.on('error', () => {});
    await waitFor('the stream held upstream', () => (upstream.held('h2') === 1 ? true : undefined));
    assert.equal(await stat('http2.streams_active'), 1);
    held.close(h2constants.NGHTTP2_CANCEL);
    await waitFor('the reset counted', async () => ((await stat('http2.rx_reset')) === resets + 1 ? true : undefined));
    assert.equal(await stat('http2.trailers'), trailers + 1);
    assert.equal(await stat('http2.streams_active'), 0);
    session.close();
    upstream.release('h2');
  });

  it('publishes the ring of a RING_HASH cluster, and counts what the TLS inspector found', async () => {
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/ring`);
    assert.equal(await stat('cluster.ring.ring_hash_lb.size'), 1024, "Envoy's minimum ring size, all for the one host");
    assert.equal(await stat('cluster.ring.ring_hash_lb.min_hashes_per_host'), 1024);
    assert.equal(await stat('cluster.ring.ring_hash_lb.max_hashes_per_host'), 1024);
    assert.ok((await stat('tls_inspector.tls_not_found')) >= 1);
    assert.equal(await stat('tls_inspector.tls_found'), 0);
    // A client that connects and leaves before saying anything: closed while the inspector waited.
    const listener = `listener.127.0.0.1_${proxy.ports.get('web')}.`;
    const silent = connect(proxy.ports.get('web')!, '127.0.0.1');
    await once(silent, 'connect');
    silent.end();
    await waitFor('the close counted', async () => ((await stat(`${listener}downstream_listener_filter_remote_close`)) === 1 ? true : undefined));
    assert.equal(await stat(`${listener}downstream_listener_filter_error`), 0);
  });

  it("answers 503 for a cluster in maintenance mode (the runtime's upstream.maintenance_mode.<cluster>), counted", async () => {
    const url = `http://127.0.0.1:${proxy.ports.get('web')}/`;
    const set = (value: string) => httpRequest(`http://${proxy.admin}/runtime_modify?upstream.maintenance_mode.dns=${value}`, { method: 'POST' });
    assert.equal((await set('100')).status, 200);
    const r = await httpRequest(url);
    assert.deepEqual([r.status, r.body], [503, 'maintenance mode']);
    assert.equal(await stat('cluster.dns.upstream_rq_maintenance_mode'), 1);
    assert.equal((await set('')).status, 200);
    assert.equal((await httpRequest(url)).status, 200);
  });

  it('counts an upstream whose answer is not HTTP as a protocol error', async () => {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/garbage`);
    assert.equal(r.status, 503);
    assert.equal(await stat('cluster.garbage.upstream_cx_protocol_error'), 1);
  });
});
