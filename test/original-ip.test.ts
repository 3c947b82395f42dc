import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { lastAddressFromXff, lastUntrustedFromXff } from '../shared/http/original-ip.js';
import { compileCidrRange } from '../shared/address.js';
import type { DownstreamRequest } from '../worker/http/downstream.js';
import { mutateRequestHeaders, requestHeaderSettings, serverLocalAddress } from '../worker/http/request-headers.js';
import type { HttpConnectionManager } from '../shared/config/envoy-types.js';
import { HCM_TYPE, loadErrors, ROUTER_TYPE, routesListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, rawExchange, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The client's original address, as Envoy's connection manager finds it: use_remote_address with
 * xff_num_trusted_hops, the x-forwarded-for detection without it, and the original IP detection
 * extensions (custom_header, xff with xff_trusted_cidrs), with the vectors of Envoy's
 * conn_manager_utility_test, utility_test (getLastAddressFromXFF) and the extensions' tests.
 */

const CUSTOM_HEADER = 'type.googleapis.com/envoy.extensions.http.original_ip_detection.custom_header.v3.CustomHeaderConfig';
const XFF = 'type.googleapis.com/envoy.extensions.http.original_ip_detection.xff.v3.XffConfig';
const RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';

describe('x-forwarded-for entries (getLastAddressFromXFF)', () => {
  const xff = '192.0.2.10, 192.0.2.1, 10.0.0.1';

  it('skips trusted hops from the end; the address is trusted only when it is the only entry', () => {
    assert.deepEqual(lastAddressFromXff(xff, 0), { ip: '10.0.0.1', single: false });
    assert.deepEqual(lastAddressFromXff(xff, 1), { ip: '192.0.2.1', single: false });
    assert.deepEqual(lastAddressFromXff(xff, 2), { ip: '192.0.2.10', single: false });
    assert.deepEqual(lastAddressFromXff(xff, 3), { single: false });
    assert.deepEqual(lastAddressFromXff('192.0.2.10', 0), { ip: '192.0.2.10', single: true });
  });

  it('takes spaces on either side of a comma, and nothing from what is not an address', () => {
    assert.equal(lastAddressFromXff('192.0.2.10, 192.0.2.1 ,10.0.0.1,10.0.0.2', 1).ip, '10.0.0.1');
    assert.equal(lastAddressFromXff('192.0.2.10, 192.0.2.1 ,10.0.0.1,10.0.0.2', 2).ip, '192.0.2.1');
    for (const bad of ['', ',', 'not-an-address', '192.0.2.1,', '192.0.2.1:80']) assert.deepEqual(lastAddressFromXff(bad, 0), { single: false }, bad);
    assert.deepEqual(lastAddressFromXff(undefined, 0), { single: false });
    assert.equal(lastAddressFromXff('2001:db8::1, fe80::1', 0).ip, 'fe80::1');
  });

  it('past trusted ranges: the last untrusted entry, or the first when all are trusted', () => {
    const trusted = compileCidrRange({ address_prefix: '192.0.2.0', prefix_len: 24 });
    assert.deepEqual(lastUntrustedFromXff('198.51.100.1, 192.0.2.5, 192.0.2.6', trusted), { ip: '198.51.100.1', single: false });
    assert.deepEqual(lastUntrustedFromXff('203.0.113.9, 198.51.100.1, 192.0.2.5', trusted), { ip: '198.51.100.1', single: false });
    assert.deepEqual(lastUntrustedFromXff('192.0.2.7, 192.0.2.5', trusted), { ip: '192.0.2.7', single: false });
    assert.deepEqual(lastUntrustedFromXff('198.51.100.1', trusted), { ip: '198.51.100.1', single: true });
    assert.deepEqual(lastUntrustedFromXff('198.51.100.1, junk, 192.0.2.5', trusted), { single: false });
  });
});

/** A request from `peer`, as the connection manager sees one. */
function fromPeer(peer: string, port = 40000): DownstreamRequest {
  return { socket: { remoteAddress: peer, remotePort: port } } as unknown as DownstreamRequest;
}

function mutate(hcm: Partial<HttpConnectionManager>, peer: string, headers: Record<string, string>) {
  const settings = requestHeaderSettings({ stat_prefix: 't', ...hcm } as HttpConnectionManager, '192.0.2.2', { id: '', cluster: '' });
  const result = mutateRequestHeaders(fromPeer(peer), headers, settings);
  return { result, headers };
}

describe('mutateRequestHeaders finds the client (conn_manager_utility_test)', () => {
  it('use_remote_address with one trusted hop takes the last x-forwarded-for entry, and appends the peer', () => {
    // UseRemoteAddressWithXFFTrustedHops
    const { result, headers } = mutate({ use_remote_address: true, xff_num_trusted_hops: 1 }, '203.0.113.128', { 'x-forwarded-for': '198.51.100.1' });
    assert.deepEqual(result, { ip: '198.51.100.1', port: 0 });
    assert.equal(headers['x-forwarded-for'], '198.51.100.1,203.0.113.128');
    assert.equal(headers['x-envoy-external-address'], '198.51.100.1');
  });

  it('use_remote_address whose trusted hops did not fill x-forwarded-for takes the peer', () => {
    const { result, headers } = mutate({ use_remote_address: true, xff_num_trusted_hops: 2 }, '203.0.113.128', { 'x-forwarded-for': '198.51.100.1' });
    assert.deepEqual(result, { ip: '203.0.113.128', port: 40000 });
    assert.equal(headers['x-envoy-external-address'], '203.0.113.128');
  });

  it('use_remote_address without trusted hops overwrites x-forwarded-proto; with them it keeps the one a trusted proxy set', () => {
    assert.equal(mutate({ use_remote_address: true }, '203.0.113.128', { 'x-forwarded-proto': 'https' }).headers['x-forwarded-proto'], 'http');
    assert.equal(mutate({ use_remote_address: true, xff_num_trusted_hops: 1 }, '203.0.113.128', { 'x-forwarded-proto': 'https' }).headers['x-forwarded-proto'], 'https');
  });

  it('without use_remote_address, trusted hops pick an earlier entry and x-forwarded-for is left alone', () => {
    // UseXFFTrustedHopsWithoutRemoteAddress
    const { result, headers } = mutate({ xff_num_trusted_hops: 1 }, '127.0.0.1', { 'x-forwarded-for': '198.51.100.2, 198.51.100.1' });
    assert.deepEqual(result, { ip: '198.51.100.2', port: 0 });
    assert.equal(headers['x-forwarded-for'], '198.51.100.2, 198.51.100.1');
    assert.equal(headers['x-envoy-external-address'], undefined); // not an edge request
  });

  it('an address from x-forwarded-for decides internal only when it is the only entry', () => {
    const internal = { internal_address_config: { cidr_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] } };
    assert.equal(mutate(internal, '127.0.0.1', { 'x-forwarded-for': '10.0.0.1' }).headers['x-envoy-internal'], 'true');
    assert.equal(mutate(internal, '127.0.0.1', { 'x-forwarded-for': '192.0.2.1, 10.0.0.1' }).headers['x-envoy-internal'], undefined);
    assert.equal(mutate({ ...internal, xff_num_trusted_hops: 1 }, '127.0.0.1', { 'x-forwarded-for': '10.0.0.1, 10.0.0.2' }).headers['x-envoy-internal'], undefined);
  });

  it('without an address anywhere, the peer is the client', () => {
    assert.deepEqual(mutate({}, '127.0.0.1', {}).result, { ip: '127.0.0.1', port: 40000 });
    assert.deepEqual(mutate({}, '127.0.0.1', { 'x-forwarded-for': 'unknown' }).result, { ip: '127.0.0.1', port: 40000 });
  });

  it('the xff extension with trusted CIDRs reads past them only for a peer in them; skip_xff_append false appends', () => {
    const ext = (config: object) => ({ original_ip_detection_extensions: [{ name: 'envoy.http.original_ip_detection.xff', typed_config: { '@type': XFF, ...config } }] });
    const cidrs = { xff_trusted_cidrs: { cidrs: [{ address_prefix: '192.0.2.0', prefix_len: 24 }] } };
    const trustedPeer = mutate(ext(cidrs), '192.0.2.5', { 'x-forwarded-for': '198.51.100.1, 192.0.2.6' });
    assert.deepEqual(trustedPeer.result, { ip: '198.51.100.1', port: 0 });
    assert.equal(trustedPeer.headers['x-forwarded-for'], '198.51.100.1, 192.0.2.6');
    assert.deepEqual(mutate(ext(cidrs), '203.0.113.1', { 'x-forwarded-for': '198.51.100.1, 192.0.2.6' }).result, { ip: '203.0.113.1', port: 40000 });
    const appended = mutate(ext({ ...cidrs, skip_xff_append: false }), '192.0.2.5', { 'x-forwarded-for': '198.51.100.1' });
    assert.equal(appended.headers['x-forwarded-for'], '198.51.100.1,192.0.2.5');
  });

  it('the custom header extension: its first value, trusted only when allowed, and its rejection', () => {
    const ext = (config: object) => ({
      internal_address_config: { cidr_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] },
      original_ip_detection_extensions: [{ name: 'envoy.http.original_ip_detection.custom_header', typed_config: { '@type': CUSTOM_HEADER, header_name: 'X-Real-IP', ...config } }],
    });
    assert.deepEqual(mutate(ext({}), '127.0.0.1', { 'x-real-ip': '10.1.2.3' }).result, { ip: '10.1.2.3', port: 0 });
    assert.equal(mutate(ext({}), '127.0.0.1', { 'x-real-ip': '10.1.2.3' }).headers['x-envoy-internal'], undefined);
    assert.equal(mutate(ext({ allow_extension_to_set_address_as_trusted: true }), '127.0.0.1', { 'x-real-ip': '10.1.2.3' }).headers['x-envoy-internal'], 'true');
    assert.deepEqual(mutate(ext({}), '127.0.0.1', {}).result, { ip: '127.0.0.1', port: 40000 });
    assert.deepEqual(mutate(ext({ reject_with_status: { code: 'Unauthorized' } }), '127.0.0.1', { 'x-real-ip': 'nope' }).result, { rejectStatus: 401 });
    // A status outside 400–511 is answered as 403 (CustomHeaderIPDetection).
    assert.deepEqual(mutate(ext({ reject_with_status: { code: 'OK' } }), '127.0.0.1', {}).result, { rejectStatus: 403 });
  });
});

describe('original IP detection configuration', () => {
  const bootstrap = (hcm: object) => ({
    static_resources: {
      listeners: [{
        name: 'l',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        filter_chains: [{ filters: [{ name: 'hcm', typed_config: { '@type': HCM_TYPE, stat_prefix: 'l', route_config: {}, http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }], ...hcm } }] }],
      }],
    },
  });
  const custom = { name: 'envoy.http.original_ip_detection.custom_header', typed_config: { '@type': CUSTOM_HEADER, header_name: 'x-real-ip' } };
  const messages = (hcm: object) => loadErrors(bootstrap(hcm)).map(String);

  it("refuses what Envoy refuses, with its words", () => {
    assert.deepEqual(messages({ original_ip_detection_extensions: [custom] }), []);
    assert.ok(messages({ use_remote_address: true, original_ip_detection_extensions: [custom] }).some((m) => m.includes('Original IP detection extensions and use_remote_address may not be mixed')));
    assert.ok(messages({ xff_num_trusted_hops: 1, original_ip_detection_extensions: [custom] }).some((m) => m.includes('Original IP detection extensions and xff_num_trusted_hops may not be mixed')));
    const xffBoth = { name: 'xff', typed_config: { '@type': XFF, xff_num_trusted_hops: 1, xff_trusted_cidrs: { cidrs: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] } } };
    assert.ok(messages({ original_ip_detection_extensions: [xffBoth] }).some((m) => m.includes('Cannot set both xff_num_trusted_hops and xff_trusted_cidrs')));
    const unknown = { name: 'mine', typed_config: { '@type': 'type.googleapis.com/google.protobuf.Struct' } };
    assert.ok(messages({ original_ip_detection_extensions: [unknown] }).length > 0);
  });
});

describe('original IP detection through the proxy', () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const echoed = { 'x-client': '%DOWNSTREAM_REMOTE_ADDRESS%', 'x-direct': '%DOWNSTREAM_DIRECT_REMOTE_ADDRESS%' };

  const listener = (name: string, hcm: object, filters: object[] = []) =>
    routesListener(name, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], 0, {
      hcm,
      filters,
      vhost: { response_headers_to_add: Object.entries(echoed).map(([key, value]) => ({ header: { key, value } })) },
    });

  before(async () => {
    upstream = await startUpstream('U');
    const onlyFromDocumentation = { rules: { action: 'ALLOW', policies: { doc: { permissions: [{ any: true }], principals: [{ remote_ip: { address_prefix: '198.51.100.0', prefix_len: 24 } }] } } } };
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          listener('hops', { xff_num_trusted_hops: 1 }),
          listener('custom', {
            original_ip_detection_extensions: [{ name: 'envoy.http.original_ip_detection.custom_header', typed_config: { '@type': CUSTOM_HEADER, header_name: 'x-real-ip', reject_with_status: { code: 'Unauthorized' } } }],
          }, [{ name: 'envoy.filters.http.rbac', typed_config: { '@type': RBAC, ...onlyFromDocumentation } }]),
          listener('appending', {
            original_ip_detection_extensions: [{ name: 'envoy.http.original_ip_detection.xff', typed_config: { '@type': XFF, skip_xff_append: false, xff_trusted_cidrs: { cidrs: [{ address_prefix: '127.0.0.0', prefix_len: 8 }] } } }],
          }),
        ],
        clusters: [staticCluster('backend', upstream.port)],
      },
    }, ['--concurrency', '1']);
  });

  after(async () => {
    await stopAllProxies();
    await upstream.close();
  });

  const url = (name: string) => `http://127.0.0.1:${proxy.ports.get(name)}/echo`;

  it('%DOWNSTREAM_REMOTE_ADDRESS% is the address found, port 0; the DIRECT one stays the peer', async () => {
    const r = await httpRequest(url('hops'), { headers: { 'x-forwarded-for': '198.51.100.2, 198.51.100.1' } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers['x-client'], '198.51.100.2:0');
    assert.match(String(r.headers['x-direct']), /^127\.0\.0\.1:\d+$/);
    assert.equal(JSON.parse(r.body).headers['x-forwarded-for'], '198.51.100.2, 198.51.100.1');
  });

  it('a request without the custom header is refused with its status and counted; RBAC sees the address found', async () => {
    const refused = await httpRequest(url('custom'));
    assert.equal(refused.status, 401);
    assert.equal(await statValue(proxy, 'http.custom.downstream_rq_rejected_via_ip_detection'), 1);
    const allowed = await httpRequest(url('custom'), { headers: { 'x-real-ip': '198.51.100.7' } });
    assert.equal(allowed.status, 200, allowed.body);
    assert.equal(allowed.headers['x-client'], '198.51.100.7:0');
    // remote_ip is the address the connection manager found, not the peer (direct_remote_ip).
    assert.equal((await httpRequest(url('custom'), { headers: { 'x-real-ip': '203.0.113.7' } })).status, 403);
  });

  it('a custom header sent twice: its first value, as Envoy reads it (node joins the two)', async () => {
    const reply = await rawExchange(proxy.ports.get('custom')!, 'GET /echo HTTP/1.1\r\nhost: x\r\nx-real-ip: 198.51.100.7\r\nX-Real-IP: 203.0.113.7\r\nconnection: close\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 200 /);
    assert.match(reply, /\r\nx-client: 198\.51\.100\.7:0\r\n/);
  });

  it('the xff extension past a trusted loopback peer, appending this proxy for it', async () => {
    const r = await httpRequest(url('appending'), { headers: { 'x-forwarded-for': '198.51.100.9, 127.0.0.5' } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers['x-client'], '198.51.100.9:0');
    assert.equal(JSON.parse(r.body).headers['x-forwarded-for'], `198.51.100.9, 127.0.0.5,${serverLocalAddress('v4')}`);
  });
});
