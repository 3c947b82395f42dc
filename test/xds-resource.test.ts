import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkResource, CLUSTER_TYPE } from '../shared/config/xds-resource.js';

/** One discovery resource checked alone, as the bootstrap is, under the three unknown-field policies. */

const cluster = (extra: Record<string, unknown> = {}) => ({
  '@type': `type.googleapis.com/${CLUSTER_TYPE}`,
  name: 'c1',
  type: 'STATIC',
  connect_timeout: '1s',
  load_assignment: { cluster_name: 'c1', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 80 } } } }] }] },
  ...extra,
});

describe('a discovery resource checked alone', () => {
  it('accepts a valid cluster as its canonical message', () => {
    const r = checkResource(CLUSTER_TYPE, cluster(), 'warn', new Set());
    assert.deepEqual([r.name, r.errors, r.message?.connect_timeout], ['c1', [], '1s']);
  });

  it('warns about unknown fields by default, refuses them with --reject-unknown-dynamic-fields, says nothing with --ignore-unknown-dynamic-fields', () => {
    const withUnknown = cluster({ no_such_field: 1 });
    const warn = checkResource(CLUSTER_TYPE, withUnknown, 'warn', new Set());
    assert.ok(warn.message);
    assert.deepEqual(warn.unknownFields, ['envoy.config.cluster.v3.Cluster.no_such_field']);
    const reject = checkResource(CLUSTER_TYPE, withUnknown, 'reject', new Set());
    assert.equal(reject.message, undefined);
    assert.match(reject.errors.join('\n'), /no_such_field/);
    const ignore = checkResource(CLUSTER_TYPE, withUnknown, 'ignore', new Set());
    assert.ok(ignore.message);
    assert.deepEqual(ignore.unknownFields, []);
  });

  it('names what is wrong: another type, a constraint, an unsupported field, the cluster semantics', () => {
    const errors = (r: ReturnType<typeof checkResource>) => r.errors.join('\n');
    assert.match(errors(checkResource(CLUSTER_TYPE, { '@type': 'type.googleapis.com/envoy.config.listener.v3.Listener', name: 'l' }, 'warn', new Set())), /a resource of type .*Listener where envoy\.config\.cluster\.v3\.Cluster was expected/);
    assert.match(errors(checkResource(CLUSTER_TYPE, cluster({ name: '' }), 'warn', new Set())), /name/);
    assert.match(errors(checkResource(CLUSTER_TYPE, cluster({ lb_policy: 'CLUSTER_PROVIDED' }), 'warn', new Set())), /^lb_policy: CLUSTER_PROVIDED is not supported by this proxy/m);
    assert.match(errors(checkResource(CLUSTER_TYPE, cluster({ type: 'ORIGINAL_DST' }), 'warn', new Set())), /cluster type ORIGINAL_DST is not supported/);
    assert.match(errors(checkResource(CLUSTER_TYPE, cluster({ type: 'EDS' }), 'warn', new Set())), /an EDS cluster needs a source for its endpoints/);
    const tls = cluster({ transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext' } } });
    assert.deepEqual(checkResource(CLUSTER_TYPE, tls, 'warn', new Set()).errors, [], 'TLS to the upstream is a cluster like any other');
  });
});
