import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadErrors, minimalBootstrap, staticCluster } from '../../../test/helpers/bootstraps.js';
import type { Cluster } from '../../config/envoy-types.js';
import { clusterLbPolicy } from './lookup.js';

/**
 * A cluster's typed load_balancing_policy, as Envoy's configureLbPolicies reads it (its errors in
 * its words), and the policy each extension configures. The balancers themselves:
 * test/load-balancing.test.ts and test/hash-policy.test.ts.
 */

const T = 'type.googleapis.com/envoy.extensions.load_balancing_policies';
const policy = (name: string, type: string, config: object = {}) => ({ typed_extension_config: { name, typed_config: { '@type': `${T}.${type}`, ...config } } });
const cluster = (over: object): Cluster => ({ ...staticCluster('backend', 8080), ...over }) as Cluster;

function errorsOf(over: object): [string, string][] {
  const doc = minimalBootstrap() as { static_resources: { clusters: object[] } };
  doc.static_resources.clusters = [cluster(over)];
  return loadErrors(doc).map((e) => [e.code, e.path]);
}

describe('load_balancing_policy', () => {
  it('configures what each policy says, in the terms of the balancers', () => {
    const of = (p: object) => clusterLbPolicy(cluster({ load_balancing_policy: { policies: [p] } }));
    assert.deepEqual(of(policy('rr', 'round_robin.v3.RoundRobin')), { kind: 'ROUND_ROBIN', localityWeighted: false });
    assert.deepEqual(of(policy('rr', 'round_robin.v3.RoundRobin', { locality_lb_config: { locality_weighted_lb_config: {} } })), { kind: 'ROUND_ROBIN', localityWeighted: true });
    assert.deepEqual(of(policy('lr', 'least_request.v3.LeastRequest', { choice_count: 5 })), { kind: 'LEAST_REQUEST', choiceCount: 5, localityWeighted: false });
    assert.deepEqual(of(policy('r', 'random.v3.Random')), { kind: 'RANDOM', localityWeighted: false });
    assert.deepEqual(of(policy('rh', 'ring_hash.v3.RingHash', { minimum_ring_size: '64' })), { kind: 'RING_HASH', minimumRingSize: 64, maximumRingSize: 8 * 1024 * 1024, localityWeighted: false });
    assert.deepEqual(of(policy('m', 'maglev.v3.Maglev', { table_size: '307' })), { kind: 'MAGLEV', tableSize: 307, localityWeighted: false });
  });

  it('sets lb_policy aside, and takes the first policy this proxy implements', () => {
    const c = cluster({ lb_policy: 'RING_HASH', load_balancing_policy: { policies: [policy('wrr', 'client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin'), policy('lr', 'least_request.v3.LeastRequest')] } });
    assert.equal(clusterLbPolicy(c).kind, 'LEAST_REQUEST');
    assert.deepEqual(errorsOf({ lb_policy: 'RING_HASH', load_balancing_policy: { policies: [policy('wrr', 'client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin'), policy('lr', 'least_request.v3.LeastRequest')] } }), []);
    assert.equal(clusterLbPolicy(cluster({ lb_policy: 'RANDOM' })).kind, 'RANDOM', 'without the field, lb_policy');
  });

  it("refuses, in Envoy's words, a list of none it implements, a missing field, and common_lb_config's partial fields", () => {
    assert.deepEqual(errorsOf({ load_balancing_policy: { policies: [policy('cp', 'cluster_provided.v3.ClusterProvided')] } }), [['unsupported_extension', 'static_resources.clusters[0].load_balancing_policy']]);
    assert.deepEqual(errorsOf({ lb_policy: 'LOAD_BALANCING_POLICY_CONFIG' }), [['missing', 'static_resources.clusters[0].load_balancing_policy']]);
    assert.deepEqual(errorsOf({ load_balancing_policy: { policies: [policy('rr', 'round_robin.v3.RoundRobin')] }, common_lb_config: { locality_weighted_lb_config: {} } }), [['conflict', 'static_resources.clusters[0].common_lb_config']]);
  });

  it("checks the chosen policy's configuration: a prime Maglev table, a ring's sizes, its hash", () => {
    const at = 'static_resources.clusters[0].load_balancing_policy.policies[0].typed_extension_config.typed_config';
    assert.deepEqual(errorsOf({ load_balancing_policy: { policies: [policy('m', 'maglev.v3.Maglev', { table_size: '100' })] } }), [['invalid', `${at}.table_size`]]);
    assert.deepEqual(errorsOf({ load_balancing_policy: { policies: [policy('rh', 'ring_hash.v3.RingHash', { minimum_ring_size: '4096', maximum_ring_size: '1024' })] } }), [['invalid', at]]);
    assert.deepEqual(errorsOf({ load_balancing_policy: { policies: [policy('rh', 'ring_hash.v3.RingHash', { hash_function: 'MURMUR_HASH_2' })] } }), [['unsupported', `${at}.hash_function`]]);
    assert.deepEqual(errorsOf({ load_balancing_policy: { policies: [policy('rr', 'round_robin.v3.RoundRobin', { slow_start_config: { slow_start_window: '10s' } })] } }).map(([code]) => code), ['unsupported_field']);
  });
});
