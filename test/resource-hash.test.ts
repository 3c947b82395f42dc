import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalText, sameResource } from '../shared/config/resource-hash.js';
import { checkResource, CLUSTER_TYPE } from '../shared/config/xds-resource.js';
import { ClusterManager } from '../supervisor/cluster-manager.js';
import { RouteManager } from '../supervisor/route-manager.js';

/**
 * Versions of a resource compare as Envoy compares them (by a hash of the message, whatever the
 * order of its maps' entries): a control plane that sends the same resource again, its maps in
 * another order, changes nothing.
 */

const CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const ROUTES = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const policy = { unknownFields: 'reject' as const, disabledExtensions: new Set<never>() };

const cluster = (metadata: object, timeout = '1s') => ({
  '@type': CLUSTER,
  name: 'backend',
  type: 'STATIC',
  connect_timeout: timeout,
  metadata: { filter_metadata: metadata },
  load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 1 } } } }] }] },
});

describe('resource versions compared by hash', () => {
  it('canonical text sorts every object\'s keys and keeps arrays in order', () => {
    assert.equal(canonicalText({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
    assert.equal(canonicalText({ a: undefined, b: 'x' }), '{"b":"x"}');
    assert.notEqual(canonicalText([1, 2]), canonicalText([2, 1]));
  });

  it('takes a cluster whose Struct keys come in another order for the same cluster, and a changed one for a change', () => {
    const a = checkResource(CLUSTER_TYPE, cluster({ 'envoy.lb': { zone: 'a', canary: false } }), 'reject', new Set()).message!;
    const b = checkResource(CLUSTER_TYPE, cluster({ 'envoy.lb': { canary: false, zone: 'a' } }, '1.000s'), 'reject', new Set()).message!;
    assert.notEqual(JSON.stringify(a), JSON.stringify(b), 'the decoded messages keep the keys in the order they came');
    assert.equal(sameResource(a, b), true);
    const c = checkResource(CLUSTER_TYPE, cluster({ 'envoy.lb': { canary: true, zone: 'a' } }), 'reject', new Set()).message!;
    assert.equal(sameResource(a, c), false);
  });

  it('CDS: the same cluster again, its metadata reordered, is neither modified nor warmed', () => {
    const manager = new ClusterManager({}, Date.now());
    const first = manager.applyCds('1', [cluster({ m: { x: '1', y: '2' } })], policy);
    assert.deepEqual([first.upserted.length + first.warming.length, first.rejected], [1, []]);
    const again = manager.applyCds('2', [cluster({ m: { y: '2', x: '1' } })], policy);
    assert.deepEqual([again.upserted.length, again.warming.length, again.removed.length, again.rejected], [0, 0, 0, []]);
    const changed = manager.applyCds('3', [cluster({ m: { y: '3', x: '1' } })], policy);
    assert.equal(changed.upserted.length + changed.warming.length, 1);
  });

  it('RDS: the same table again, its typed_per_filter_config map reordered, is not updated', async () => {
    const routes = new RouteManager({ allocate: () => [], release: () => {} });
    const CORS = 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy';
    const table = (perFilter: Record<string, object>) => ({
      '@type': ROUTES,
      name: 'local',
      virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], typed_per_filter_config: perFilter }],
    });
    const cors = { '@type': CORS, allow_origin_string_match: [{ exact: 'https://a.example' }] };
    const off = { '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig', disabled: true };
    const first = await routes.applyRds('1', [table({ 'envoy.filters.http.cors': cors, 'envoy.filters.http.csrf': off })], policy, new Set());
    assert.deepEqual([first.updated.length, first.rejected], [1, []]);
    const again = await routes.applyRds('2', [table({ 'envoy.filters.http.csrf': off, 'envoy.filters.http.cors': cors })], policy, new Set());
    assert.deepEqual([again.updated.length, again.rejected], [0, []]);
  });
});
