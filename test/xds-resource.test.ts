import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BinaryDecoder } from '../shared/config/proto-binary.js';
import { envoySchema } from '../shared/config/schema.js';
import { checkResource, CLUSTER_TYPE, LISTENER_TYPE, noteBinaryFindings, responseErrors } from '../shared/config/xds-resource.js';
import { nackDetail, resourcesNoted } from '../supervisor/xds/grpc-stream.js';
import { routesListener } from './helpers/bootstraps.js';
import { configError } from '../shared/config/config-error.js';

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

describe('what refuses a whole discovery response, as Envoy\'s resource decoder does', () => {
  it('a resource breaking its message\'s own rules (an empty bound is zero), or of another type, named with its field; the valid ones are not named', () => {
    const refused = responseErrors(CLUSTER_TYPE, [cluster({ connect_timeout: '-1s' }), cluster({ name: 'c2', cleanup_interval: '0s' }), cluster({ name: 'fine' }), { '@type': `type.googleapis.com/${LISTENER_TYPE}`, name: 'l' }], 'warn');
    assert.deepEqual(refused, [
      "cluster 'c1': connect_timeout: value must be greater than 0s",
      "cluster 'c2': cleanup_interval: value must be greater than 0s",
      "cluster 'l': a resource of type type.googleapis.com/envoy.config.listener.v3.Listener where envoy.config.cluster.v3.Cluster was expected",
    ]);
    assert.deepEqual(responseErrors(CLUSTER_TYPE, [cluster({ lb_policy: 'CLUSTER_PROVIDED' })], 'warn'), [], 'a field this proxy lacks is the resource\'s own refusal');
  });

  it('a rule broken inside a typed config (an Any) is the resource\'s own refusal, as Envoy checks it when the filter\'s factory is built', () => {
    const listener = { '@type': `type.googleapis.com/${LISTENER_TYPE}`, ...routesListener('l1', []) } as Record<string, any>;
    listener.filter_chains[0].filters[0].typed_config.stat_prefix = '';
    assert.deepEqual(responseErrors(LISTENER_TYPE, [listener], 'warn'), []);
    assert.deepEqual(checkResource(LISTENER_TYPE, listener, 'warn', new Set()).errors.map((e) => [e.code, e.path.split('.').pop()]), [['constraint', 'stat_prefix']]);
  });

  it('unknown fields outside the typed configs refuse the response with --reject-unknown-dynamic-fields; inside one, only the resource', () => {
    assert.deepEqual(responseErrors(CLUSTER_TYPE, [cluster({ no_such_field: 1 })], 'warn'), []);
    assert.match(responseErrors(CLUSTER_TYPE, [cluster({ no_such_field: 1 })], 'reject').join(), /cluster 'c1': no_such_field: unknown field/);
    const listener = { '@type': `type.googleapis.com/${LISTENER_TYPE}`, ...routesListener('l1', []) } as Record<string, any>;
    listener.filter_chains[0].filters[0].typed_config.no_such_field = 1;
    assert.deepEqual(responseErrors(LISTENER_TYPE, [listener], 'reject'), []);
    assert.deepEqual(checkResource(LISTENER_TYPE, listener, 'reject', new Set()).errors.map((e) => [e.code, e.path.split('.').pop()]), [['unknown_field', 'no_such_field']]);
  });

  it('what the binary decoder found in a resource: malformed bytes refuse the response; unknown field numbers are counted, or refuse it when rejected', () => {
    const bad = cluster();
    noteBinaryFindings(bad, { errors: [configError('parse', 'name', 'malformed binary data (a string field holds invalid UTF-8)')], unknownFields: [] });
    assert.deepEqual(responseErrors(CLUSTER_TYPE, [bad], 'warn'), ["cluster 'c1': name: malformed binary data (a string field holds invalid UTF-8)"]);
    const unknown = cluster();
    noteBinaryFindings(unknown, { errors: [], unknownFields: [{ path: '#99', typeName: CLUSTER_TYPE, field: 'field number 99' }] });
    assert.deepEqual(checkResource(CLUSTER_TYPE, unknown, 'warn', new Set()).unknownFields, [`${CLUSTER_TYPE}.field number 99`]);
    const rejected = cluster();
    noteBinaryFindings(rejected, { errors: [], unknownFields: [{ path: '#99', typeName: CLUSTER_TYPE, field: 'field number 99' }] });
    assert.deepEqual(responseErrors(CLUSTER_TYPE, [rejected], 'reject'), [`cluster 'c1': #99: unknown field in ${CLUSTER_TYPE}`]);
  });

  it('a DiscoveryResponse from the wire: a resource with invalid UTF-8 and an unknown field number is noted on that resource, its sibling untouched', () => {
    const root = envoySchema();
    const Cluster = root.lookupType(CLUSTER_TYPE);
    const good = Cluster.encode(Cluster.fromObject({ name: 'good', connect_timeout: { seconds: 1 } })).finish();
    // Field 1 (name) holding the bytes ff fe, then field 99 (unknown) as a varint.
    const broken = Uint8Array.from([0x0a, 0x02, 0xff, 0xfe, 0x98, 0x06, 0x01]);
    const withUnknown = Uint8Array.from([...good, 0x98, 0x06, 0x01]);
    const Response = root.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
    const url = `type.googleapis.com/${CLUSTER_TYPE}`;
    const bytes = Response.encode(Response.fromObject({ version_info: '1', type_url: url, nonce: 'n', resources: [{ type_url: url, value: good }, { type_url: url, value: broken }, { type_url: url, value: withUnknown }, { value: good }] })).finish();
    const json = resourcesNoted(new BinaryDecoder(root).decode(Response, bytes), false);
    const resources = json.resources as Record<string, unknown>[];
    assert.deepEqual(responseErrors(CLUSTER_TYPE, resources, 'warn'), [
      "cluster 'resources[1]': name: malformed binary data (a string field holds invalid UTF-8)",
      "cluster 'resources[3]': a resource of type  where envoy.config.cluster.v3.Cluster was expected",
    ]);
    assert.deepEqual(checkResource(CLUSTER_TYPE, resources[2]!, 'warn', new Set()).unknownFields, [`${CLUSTER_TYPE}.field number 99`]);
    assert.deepEqual(checkResource(CLUSTER_TYPE, resources[0]!, 'warn', new Set()).unknownFields, []);
    // What is wrong outside the resources fails the message itself (the stream), as protobuf's parse does in Envoy.
    const outside = Response.encode(Response.fromObject({ version_info: '1', type_url: url })).finish();
    const corrupt = Uint8Array.from([...outside, 0x2a, 0x02, 0xff, 0xfe]); // field 5 (nonce), invalid UTF-8
    assert.throws(() => resourcesNoted(new BinaryDecoder(root).decode(Response, corrupt), false), /undecodable DiscoveryResponse: nonce: malformed binary data/);
  });
});

describe('an empty Any from the wire', () => {
  it("is `{}`, as protobuf's JSON writes it: a route's FilterConfig that enables its filter", () => {
    const root = envoySchema();
    const Route = root.lookupType('envoy.config.route.v3.RouteConfiguration');
    const FilterConfig = root.lookupType('envoy.config.route.v3.FilterConfig');
    const enable = FilterConfig.encode(FilterConfig.fromObject({ config: { type_url: '', value: new Uint8Array() } })).finish();
    const bytes = Route.encode(Route.fromObject({ name: 'r', virtual_hosts: [{ name: 'v', domains: ['*'], typed_per_filter_config: { f: { type_url: 'type.googleapis.com/envoy.config.route.v3.FilterConfig', value: enable } } }] })).finish();
    const json = new BinaryDecoder(root).decode(Route, bytes).json as { virtual_hosts: { typed_per_filter_config: Record<string, unknown> }[] };
    assert.deepEqual(json.virtual_hosts[0]!.typed_per_filter_config.f, { '@type': 'type.googleapis.com/envoy.config.route.v3.FilterConfig', config: {} });
  });
});

describe("a NACK's error_detail", () => {
  it('is INTERNAL, with the reasons cut at 4,096 characters as Envoy cuts them', () => {
    assert.deepEqual(nackDetail("cluster 'c': x"), { code: 13, message: "cluster 'c': x" });
    const long = nackDetail('x'.repeat(5000));
    assert.equal(long.message, `${'x'.repeat(4096)}...(truncated)`);
  });
});
