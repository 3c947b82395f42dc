import assert from 'node:assert/strict';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fromProto3JSON } from 'proto3-json-serializer';
import { BOOTSTRAP_TYPE, BootstrapError, loadBootstrap, type BootstrapSource, type LoadedBootstrap } from '../shared/config/bootstrap.js';
import { envoySchema } from '../shared/config/schema.js';
import { bootstrapSource, HCM_TYPE, httpListener, minimalBootstrap, staticCluster } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { downstreamTls, DOWNSTREAM_TLS_TYPE, makePki, UPSTREAM_TLS_TYPE } from './helpers/certs.js';
import type { ConfigError, ConfigErrorCode } from '../shared/config/config-error.js';

const tmp = tempDir();
after(() => tmp.cleanup());

const source = bootstrapSource;

function load(over: Partial<BootstrapSource>): LoadedBootstrap {
  return loadBootstrap(source(over));
}

function errorsOf(over: Partial<BootstrapSource>): ConfigError[] {
  try {
    loadBootstrap(source(over));
  } catch (err) {
    assert.ok(err instanceof BootstrapError, String(err));
    return err.errors;
  }
  assert.fail('expected the bootstrap to be refused');
}

/** What a test matches an error on: its code, where the configuration came from, the field. */
const shape = (e: ConfigError) => [e.code, e.source, e.path];

const yamlOf = (doc: unknown) => JSON.stringify(doc, null, 2); // JSON is YAML

type Case = [name: string, mutate: (d: Record<string, any>) => void, code: ConfigErrorCode, path: string];

/** One test per case: the mutated minimal bootstrap is refused with an error of `code` at `path`. */
function refuses(verb: string, cases: Case[]): void {
  for (const [name, mutate, code, path] of cases) {
    it(`${verb} ${name}`, () => {
      const d = minimalBootstrap() as Record<string, any>;
      mutate(d);
      const errors = errorsOf({ configPath: tmp.file('case.yaml', yamlOf(d)) });
      assert.ok(errors.some((e) => e.code === code && e.path === path), errors.join('\n'));
    });
  }
}

const TEXT_BOOTSTRAP = `
# the same bootstrap as minimalBootstrap(), in text format
node {
  id: "node-1"
  cluster: 'node' "-" 'cluster-1'   # adjacent literals concatenate... to "node-cluster-1"
  metadata { fields { key: "team" value { string_value: "edge" } }
             fields { key: "replicas" value { number_value: 3 } } }
}
admin { address { socket_address { address: "127.0.0.1" port_value: 9901 } } }
static_resources {
  listeners {
    name: "ingress"
    address { socket_address: { address: "127.0.0.1", port_value: 10000 } }
    filter_chains { filters {
      name: "envoy.filters.network.http_connection_manager"
      typed_config {
        [type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager] {
          stat_prefix: "ingress"
          route_config { virtual_hosts { name: "all" domains: ["*"] routes { match { prefix: "/" } route { cluster: "backend" } } } }
          http_filters { name: "envoy.filters.http.router"
            typed_config { [type.googleapis.com/envoy.extensions.filters.http.router.v3.Router] {} } }
        }
      }
    } }
  }
  clusters <
    name: "backend"; type: STATIC; connect_timeout { seconds: 0 nanos: 250000000 }
    lb_policy: LEAST_REQUEST least_request_lb_config { choice_count { value: 3 } }
    load_assignment { cluster_name: "backend" endpoints { lb_endpoints { endpoint { address { socket_address { address: "127.0.0.1" port_value: 0x1F90 } } } } } }
  >
}
`;

describe('bootstrap formats', () => {
  const expected = load({ configPath: tmp.file('b.yaml', yamlOf(minimalBootstrap())) }).bootstrap;

  it('normalises YAML to canonical, default-free proto3 JSON', () => {
    const clusters = (expected.static_resources as { clusters: Record<string, unknown>[] }).clusters;
    assert.equal(clusters[0]!.connect_timeout, '0.250s');
    assert.deepEqual(clusters[0]!.least_request_lb_config, { choice_count: 3 }); // a UInt32Value wrapper
    assert.equal(clusters[0]!.type, 'STATIC');
    assert.deepEqual((expected.node as { metadata: unknown }).metadata, { team: 'edge', replicas: 3 });
    const filter = ((expected.static_resources as { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] }).listeners[0]!.filter_chains[0]!.filters[0]!);
    assert.equal(filter.typed_config['@type'], HCM_TYPE);
  });

  it('forgets scalars set to their default, as a proto3 message does, and keeps the rest', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.static_resources.clusters[0].name = '0';
    d.static_resources.clusters[0].load_assignment.cluster_name = '0';
    d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.cluster = '0';
    d.static_resources.clusters[0].lb_policy = 'ROUND_ROBIN'; // enum value 0
    d.static_resources.clusters[0].respect_dns_ttl = false;
    const cluster = (load({ configPath: tmp.file('defaults.yaml', yamlOf(d)) }).bootstrap as any).static_resources.clusters[0];
    assert.equal(cluster.name, '0');
    assert.ok(!('lb_policy' in cluster) && !('respect_dns_ttl' in cluster));
  });

  it('reads .json, .yml and unknown extensions (as JSON) to the same result', () => {
    assert.deepEqual(load({ configPath: tmp.file('b.json', JSON.stringify(minimalBootstrap())) }).bootstrap, expected);
    assert.deepEqual(load({ configPath: tmp.file('b.yml', yamlOf(minimalBootstrap())) }).bootstrap, expected);
    assert.deepEqual(load({ configPath: tmp.file('b.conf', JSON.stringify(minimalBootstrap())) }).bootstrap, expected);
  });

  it('reads binary proto3 (.pb) to the same result', () => {
    const type = envoySchema().lookupType(BOOTSTRAP_TYPE);
    const bytes = type.encode(fromProto3JSON(type, minimalBootstrap() as never)!).finish();
    assert.deepEqual(load({ configPath: tmp.file('b.pb', bytes) }).bootstrap, expected);
  });

  it('reads text proto3 (.pb_text) to the same result', () => {
    const got = load({ configPath: tmp.file('b.pb_text', TEXT_BOOTSTRAP) }).bootstrap;
    assert.equal((got.node as { cluster: string }).cluster, 'node-cluster-1');
    assert.deepEqual({ ...got, node: expected.node }, expected);
  });

  it('reports text-format syntax errors with their line', () => {
    const errors = errorsOf({ configPath: tmp.file('bad.pb_text', 'node {\n  id: "x"\n  cluster: \n}\n') });
    assert.deepEqual([errors[0]!.code, basename(errors[0]!.source)], ['parse', 'bad.pb_text']);
    assert.match(errors[0]!.detail, /line 4/);
  });

  it('refuses unknown field numbers in binary protos, and counts them when allowed', () => {
    const type = envoySchema().lookupType(BOOTSTRAP_TYPE);
    const good = type.encode(fromProto3JSON(type, minimalBootstrap() as never)!).finish();
    const withUnknown = Buffer.concat([good, Buffer.from([0xb8, 0x3e, 0x01])]); // field 999, varint 1
    const path = tmp.file('unknown.pb', withUnknown);
    assert.deepEqual(shape(errorsOf({ configPath: path })[0]!), ['unknown_field', '', '#999']);
    assert.equal(load({ configPath: path, allowUnknownStaticFields: true }).unknownFields.length, 1);
  });

  it('reports bytes that are not a protobuf message as the file\'s error, naming it', () => {
    // An unknown field number with wire type 6 (none such), and a length past the end.
    for (const bytes of [[0xb8, 0x3e, 0x01, 0xbe, 0x3e], [0x0a, 0xff, 0x01, 0x00]]) {
      const path = tmp.file(`corrupt-${bytes.length}.pb`, Buffer.from(bytes));
      const errors = errorsOf({ configPath: path, allowUnknownStaticFields: true });
      assert.equal(errors.length, 1, errors.join('\n'));
      assert.deepEqual([errors[0]!.code, errors[0]!.source], ['parse', path]);
    }
  });

  it('refuses a string that is not UTF-8, with its path, in YAML and in binary', () => {
    const yaml = Buffer.concat([Buffer.from('node:\n  id: "edge-'), Buffer.from([0xc3, 0x28]), Buffer.from('"\n  cluster: c\n')]);
    assert.deepEqual(errorsOf({ configPath: tmp.file('latin.yaml', yaml) }).map(shape), [['parse', join(tmp.dir, 'latin.yaml'), 'node.id']]);
    // Bootstrap.node (1) { id (1): "a\xff" }
    const binary = Buffer.from([0x0a, 0x04, 0x0a, 0x02, 0x61, 0xff]);
    const latin = tmp.file('latin.pb', binary);
    assert.deepEqual(errorsOf({ configPath: latin }).map(shape), [['parse', latin, 'node.id']]);
  });

  it('reports unreadable files and YAML syntax errors', () => {
    assert.deepEqual(errorsOf({ configPath: '/nonexistent/b.yaml' }).map(String), ['unable to read file: /nonexistent/b.yaml']);
    assert.deepEqual(errorsOf({ configPath: tmp.file('dup.yaml', 'admin: {}\nadmin: {}\n') }).map((e) => e.code), ['parse']);
  });
});

describe('--config-yaml', () => {
  it('merges over the file: scalars replace, repeated fields append, messages merge', () => {
    const file = tmp.file('base.yaml', yamlOf(minimalBootstrap()));
    const overlay = yamlOf({
      admin: { address: { socket_address: { port_value: 9902 } } },
      static_resources: { clusters: [staticCluster('extra', 8081)] },
      node: { id: 'node-2' },
    });
    const got = load({ configPath: file, configYaml: overlay }).bootstrap as Record<string, any>;
    assert.deepEqual(got.admin.address.socket_address, { address: '127.0.0.1', port_value: 9902 });
    assert.deepEqual(got.static_resources.clusters.map((c: { name: string }) => c.name), ['backend', 'extra']);
    assert.equal(got.node.id, 'node-2');
    assert.equal(got.node.cluster, 'cluster-1');
  });

  it('is a bootstrap on its own when there is no file', () => {
    const got = load({ configYaml: 'admin: { address: { socket_address: { address: 127.0.0.1, port_value: 9000 } } }' }).bootstrap as Record<string, any>;
    assert.equal(got.admin.address.socket_address.port_value, 9000);
  });

  it('names itself in its errors', () => {
    const [error] = errorsOf({ configYaml: 'admin: { bogus: 1 }' });
    assert.deepEqual(shape(error!), ['unknown_field', '--config-yaml', 'admin.bogus']);
    // The layout operators read: where it came from, the field, what is wrong.
    assert.equal(error!.text, '--config-yaml: admin.bogus: unknown field in envoy.config.bootstrap.v3.Admin');
  });
});

describe('v2 bootstraps', () => {
  const v2 = {
    admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 9901 } } },
    static_resources: {
      listeners: [
        {
          name: 'ingress',
          address: { socket_address: { address: '127.0.0.1', port_value: 10000 } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.http_connection_manager',
                  config: {
                    stat_prefix: 'ingress',
                    route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { regex: '/api/.*' }, route: { cluster: 'backend' } }] }] },
                    http_filters: [{ name: 'envoy.router' }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [{ name: 'backend', connect_timeout: '1s', type: 'STATIC', hosts: [{ socket_address: { address: '127.0.0.1', port_value: 8080 } }] }],
    },
  };

  it('are upgraded to v3 for the fields the proxy supports', () => {
    const got = load({ configPath: tmp.file('v2.yaml', yamlOf(v2)), bootstrapVersion: 2 });
    const b = got.bootstrap as Record<string, any>;
    const cluster = b.static_resources.clusters[0];
    assert.deepEqual(cluster.load_assignment, {
      cluster_name: 'backend',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 8080 } } } }] }],
    });
    const hcm = b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
    assert.equal(hcm['@type'], HCM_TYPE);
    assert.deepEqual(hcm.route_config.virtual_hosts[0].routes[0].match, { safe_regex: { regex: '/api/.*' } });
    assert.match(got.warnings.join('\n'), /upgraded v2 configuration to v3: .*hosts → load_assignment/);
    assert.match(got.warnings.join('\n'), /deprecated option 'envoy\.config\.bootstrap\.v3\.Admin\.access_log_path'/);
  });

  it('are upgraded when no --bootstrap-version is given, and refused as v3', () => {
    assert.doesNotThrow(() => load({ configPath: tmp.file('v2b.yaml', yamlOf(v2)) }));
    const errors = errorsOf({ configPath: tmp.file('v2c.yaml', yamlOf(v2)), bootstrapVersion: 3 });
    assert.ok(errors.some((e) => e.code === 'unknown_field' && e.path === 'static_resources.clusters[0].hosts'), errors.join('\n'));
  });

  it('rewrites v2 @type URLs through the API\'s previous_message_type annotations', () => {
    const doc = minimalBootstrap() as Record<string, any>;
    doc.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'] =
      'type.googleapis.com/envoy.config.filter.network.http_connection_manager.v2.HttpConnectionManager';
    const b = load({ configPath: tmp.file('v2type.yaml', yamlOf(doc)) }).bootstrap as Record<string, any>;
    assert.equal(b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'], HCM_TYPE);
  });

  it('refuses an unsupported --bootstrap-version', () => {
    assert.deepEqual(errorsOf({ configYaml: '{}', bootstrapVersion: 4 }).map((e) => e.code), ['unsupported']);
  });
});

describe('unknown fields', () => {
  const doc = () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.static_resources.clusters[0].bogus_field = 1;
    d.admin.another_bogus = { x: 1 };
    return d;
  };

  it('are rejected with their field path', () => {
    const errors = errorsOf({ configPath: tmp.file('u.yaml', yamlOf(doc())) });
    assert.deepEqual(errors.map(shape).sort(), [
      ['unknown_field', '', 'admin.another_bogus'],
      ['unknown_field', '', 'static_resources.clusters[0].bogus_field'],
    ]);
  });

  it('are warned about once each and counted under --allow-unknown-static-fields', () => {
    const d = doc();
    d.static_resources.clusters.push({ ...staticCluster('second', 8081), bogus_field: 2 });
    const got = load({ configPath: tmp.file('u2.yaml', yamlOf(d)), allowUnknownStaticFields: true });
    assert.equal(got.unknownFields.length, 3);
    const warnings = got.warnings.filter((w) => w.includes('--allow-unknown-static-fields'));
    assert.equal(warnings.length, 2);
    assert.ok(!('bogus_field' in (got.bootstrap as any).static_resources.clusters[0]));
  });
});

describe('field checks from the schema and Envoy\'s constraint annotations', () => {
  refuses('reports', [
    ['wrong scalar type', (d) => (d.admin.address.socket_address.port_value = 'eighty'), 'invalid_value', 'admin.address.socket_address.port_value'],
    ['out-of-range port', (d) => (d.admin.address.socket_address.port_value = 70000), 'constraint', 'admin.address.socket_address.port_value'],
    ['empty cluster name', (d) => (d.static_resources.clusters[0].name = ''), 'constraint', 'static_resources.clusters[0].name'],
    ['unknown enum value', (d) => (d.static_resources.clusters[0].type = 'ROUND'), 'invalid_value', 'static_resources.clusters[0].type'],
    ['malformed duration', (d) => (d.static_resources.clusters[0].connect_timeout = '250ms'), 'invalid_value', 'static_resources.clusters[0].connect_timeout'],
    // A lone object where a list belongs is a list of one (Envoy's loader): its fields are then checked as an item's.
    ['a map for a repeated field', (d) => (d.static_resources.clusters = { a: 1 }), 'unknown_field', 'static_resources.clusters[0].a'],
    ['two members of a oneof', (d) => (d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match.path = '/x'), 'conflict', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match'],
  ]);

  it('takes a stats_tags regex as Envoy\'s std::regex does: Istio\'s lookahead loads, a regex without a group is refused', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.stats_config = { stats_tags: [{ tag_name: 'http_conn_manager_prefix', regex: '^listener(?=\\.).*?\\.http\\.(((?:[_.[:digit:]]*|[_\\[\\]aAbBcCdDeEfF[:digit:]]*))\\.)' }] };
    load({ configPath: tmp.file('istio-tags.yaml', yamlOf(d)) });
    d.stats_config = { stats_tags: [{ tag_name: 'bad', regex: '^listener(?=x)' }] };
    assert.deepEqual(shape(errorsOf({ configPath: tmp.file('no-group.yaml', yamlOf(d)) })[0]!), ['invalid', '', 'stats_config.stats_tags[0].regex']);
  });

  it('unwraps a TypedStruct (udpa.type.v1 and xds.type.v3) into the typed configuration it names, as Envoy does', () => {
    const d = minimalBootstrap() as Record<string, any>;
    const hcm = d.static_resources.listeners[0].filter_chains[0].filters[0];
    hcm.typed_config = { '@type': 'type.googleapis.com/udpa.type.v1.TypedStruct', type_url: hcm.typed_config['@type'], value: { ...hcm.typed_config, '@type': undefined } };
    delete hcm.typed_config.value['@type'];
    const router = hcm.typed_config.value.http_filters.at(-1);
    router.typed_config = { '@type': 'type.googleapis.com/xds.type.v3.TypedStruct', type_url: 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router', value: { start_child_span: true } };
    const got = load({ configPath: tmp.file('typed-struct.yaml', yamlOf(d)) }).bootstrap as any;
    const filter = got.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
    assert.equal(filter['@type'], HCM_TYPE);
    assert.equal(filter.stat_prefix, hcm.typed_config.value.stat_prefix);
    assert.deepEqual(filter.http_filters.at(-1).typed_config, { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router', start_child_span: true });
    // Its value is checked as that type's: an unknown field is named.
    router.typed_config.value = { no_such_field: 1 };
    assert.match(errorsOf({ configPath: tmp.file('typed-struct-bad.yaml', yamlOf(d)) }).join('\n'), /no_such_field: unknown field/);
  });

  it('reads a lone object where a list belongs as a list of one, as Envoy\'s loader does (a listener\'s filters as a mapping)', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.static_resources.listeners[0].filter_chains[0].filters = d.static_resources.listeners[0].filter_chains[0].filters[0];
    d.static_resources.clusters = d.static_resources.clusters[0];
    const got = load({ configPath: tmp.file('lone.yaml', yamlOf(d)) });
    const bootstrap = got.bootstrap as any;
    assert.equal(bootstrap.static_resources.listeners[0].filter_chains[0].filters.length, 1);
    assert.equal(bootstrap.static_resources.clusters[0].name, 'backend');
  });

  it('reports every error of a document at once', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.admin.address.socket_address.port_value = 70000;
    d.static_resources.clusters[0].name = '';
    d.static_resources.clusters[0].nonsense = true;
    assert.equal(errorsOf({ configPath: tmp.file('many.yaml', yamlOf(d)) }).length, 3);
  });
});

describe('extensions', () => {
  it('refuse a typed_config the proxy does not implement, naming its type URL', () => {
    const d = minimalBootstrap() as Record<string, any>;
    // A type of Envoy's API (so the schema knows it) that this proxy does not implement.
    d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters.unshift({
      name: 'stats', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsConfig' },
    });
    const errors = errorsOf({ configPath: tmp.file('x.yaml', yamlOf(d)) });
    assert.ok(errors.some((e) => e.code === 'unsupported_extension' && e.path === 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config'), errors.join('\n'));
  });

  it('refuse a type URL that is not in the schema at all', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'] = 'type.googleapis.com/acme.Nope';
    assert.ok(errorsOf({ configPath: tmp.file('y.yaml', yamlOf(d)) }).some((e) => e.code === 'unsupported_extension'));
  });

  it('honour --disable-extensions', () => {
    const errors = errorsOf({ configPath: tmp.file('z.yaml', yamlOf(minimalBootstrap())), disableExtensions: ['envoy.filters.http/envoy.filters.http.router'] });
    assert.deepEqual(shape(errors[0]!), ['disabled_extension', '', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config']);
  });

  it('warn about --disable-extensions entries that name nothing', () => {
    const got = load({ configPath: tmp.file('w.yaml', yamlOf(minimalBootstrap())), disableExtensions: ['nonsense', 'envoy.filters.http/envoy.filters.http.nope'] });
    assert.ok(got.warnings.includes("failed to disable invalid extension name 'nonsense'"));
    assert.ok(got.warnings.includes("failed to disable unknown extension 'envoy.filters.http/envoy.filters.http.nope'"));
  });
});

describe('whole-bootstrap checks', () => {
  refuses('refuse', [
    ['duplicate cluster names', (d) => d.static_resources.clusters.push(staticCluster('backend', 9)), 'duplicate', 'static_resources.clusters[1].name'],
    ['duplicate listener names', (d) => d.static_resources.listeners.push(httpListener('ingress', 10001)), 'duplicate', 'static_resources.listeners[1].name'],
    ['duplicate listener addresses', (d) => d.static_resources.listeners.push(httpListener('other', 10000)), 'duplicate', 'static_resources.listeners[1].address'],
    ['a route naming an unknown cluster', (d) => d.static_resources.listeners.push(httpListener('other', 10001, 'nowhere')), 'unknown_reference', 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.cluster'],
    ['an unparsable listener address', (d) => (d.static_resources.listeners[0].address.socket_address.address = 'localhost'), 'invalid', 'static_resources.listeners[0].address.socket_address.address'],
    ['a hostname in a STATIC cluster', (d) => (d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address = 'backend.local'), 'invalid', 'static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address'],
    ['an unparsable admin address', (d) => (d.admin.address.socket_address.address = '127.0.0.300'), 'invalid', 'admin.address.socket_address.address'],
    ['an admin interface on a Unix socket', (d) => (d.admin.address = { pipe: { path: 'admin.sock' } }), 'unsupported', 'admin.address.pipe'],
    ['an invalid RE2 regex', (d) => (d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match = { safe_regex: { regex: '(a' } }), 'invalid', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match.safe_regex.regex'],
    ['a router that is not last', (d) => d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters.push({ name: 'envoy.filters.http.health_check', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck', pass_through_mode: false } }), 'conflict', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0]'],
    ['a weight above 100', (d) => (d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].load_balancing_weight = 101), 'invalid', 'static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].load_balancing_weight'],
    ['an unsupported cluster type', (d) => (d.static_resources.clusters[0].type = 'ORIGINAL_DST'), 'unsupported', 'static_resources.clusters[0].type'],
    ['an EDS cluster without a source for its endpoints', (d) => (d.static_resources.clusters[0].type = 'EDS'), 'missing', 'static_resources.clusters[0].eds_cluster_config.eds_config'],
    ['a listener discovery file that does not exist', (d) => (d.dynamic_resources = { lds_config: { path_config_source: { path: 'no/such/lds.yaml' } } }), 'unknown_reference', 'dynamic_resources.lds_config.path_config_source.path'],
    ['ADS without ads_config', (d) => (d.dynamic_resources = { cds_config: { ads: {} } }), 'missing', 'dynamic_resources.cds_config.ads'],
    ['REST xDS', (d) => (d.dynamic_resources = { ads_config: { api_type: 'REST', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'backend' } }] }, cds_config: { ads: {} } }), 'unsupported', 'dynamic_resources.ads_config.api_type'],
    ['an xDS cluster that is not static', (d) => (d.dynamic_resources = { cds_config: { api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'nowhere' } }] } } }), 'unknown_reference', 'dynamic_resources.cds_config.api_config_source.grpc_services[0].envoy_grpc.cluster_name'],
    ['a cluster discovery file that does not exist', (d) => (d.dynamic_resources = { cds_config: { path_config_source: { path: 'no/such/cds.yaml' } } }), 'unknown_reference', 'dynamic_resources.cds_config.path_config_source.path'],
  ]);

  it('take enum values in lower case, as Envoy parses them, and keep the canonical name', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.static_resources.clusters[0].type = 'strict_dns';
    d.static_resources.clusters[0].lb_policy = 'round_robin';
    delete d.static_resources.clusters[0].least_request_lb_config;
    const cluster = (load({ configPath: tmp.file('lower-enums.yaml', yamlOf(d)) }).bootstrap.static_resources as any).clusters[0];
    assert.deepEqual([cluster.type, cluster.lb_policy], ['STRICT_DNS', undefined], 'ROUND_ROBIN is the default, so it is left out as Envoy leaves it out');
  });

  it('let several listeners ask for port 0', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.static_resources.listeners = [httpListener('one', 0), httpListener('two', 0)];
    assert.doesNotThrow(() => load({ configPath: tmp.file('port0.yaml', yamlOf(d)) }));
  });

  it('refuse every field of Envoy\'s API that the proxy does not implement, rather than ignore it', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.enable_dispatcher_stats = true;
    d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.proxy_100_continue = true;
    d.static_resources.clusters[0].preconnect_policy = { per_upstream_preconnect_ratio: 1.5 };
    const errors = errorsOf({ configPath: tmp.file('unsupported.yaml', yamlOf(d)) });
    assert.deepEqual(errors.map(shape).sort(), [
      ['unsupported_field', '', 'enable_dispatcher_stats'],
      ['unsupported_field', '', 'static_resources.clusters[0].preconnect_policy'],
      ['unsupported_field', '', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.proxy_100_continue'],
    ]);
    // What an operator reads names the field and its message.
    assert.equal(errors.find((e) => e.path === 'enable_dispatcher_stats')!.text, "enable_dispatcher_stats: field 'enable_dispatcher_stats' of envoy.config.bootstrap.v3.Bootstrap is not supported by this proxy");
  });

  it('apply --service-node, --service-cluster and --service-zone over the bootstrap node', () => {
    const b = load({ configPath: tmp.file('n.yaml', yamlOf(minimalBootstrap())), serviceNode: 'n9', serviceCluster: 'c9', serviceZone: 'z9' }).bootstrap as Record<string, any>;
    assert.equal(b.node.id, 'n9');
    assert.equal(b.node.cluster, 'c9');
    assert.deepEqual(b.node.locality, { zone: 'z9' });
  });

  it('a node id from --service-node is enough for xDS over gRPC (a pod passes its name)', () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.node = { cluster: 'edge' };
    d.dynamic_resources = { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'backend' } }] }, cds_config: { ads: {}, resource_api_version: 'V3' } };
    const path = tmp.file('pod.yaml', yamlOf(d));
    assert.throws(() => load({ configPath: path }), /xDS over gRPC needs a node id and cluster/);
    assert.equal((load({ configPath: path, serviceNode: 'proxy-0' }).bootstrap as Record<string, any>).node.id, 'proxy-0');
  });
});

describe('access logs in the bootstrap', () => {
  const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
  const STDOUT_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog';
  const hcm = (d: Record<string, any>) => d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  const at = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0]';

  it('accepts file and stdout loggers with formats and filters, on listeners and the admin', () => {
    const d = minimalBootstrap() as Record<string, any>;
    hcm(d).access_log = [
      { name: 'envoy.access_loggers.file', filter: { status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'log.min' } } } }, typed_config: { '@type': FILE_LOG, path: '/dev/null' } },
      { name: 'envoy.access_loggers.stdout', typed_config: { '@type': STDOUT_LOG, log_format: { json_format: { code: '%RESPONSE_CODE%' } } } },
    ];
    d.admin.access_log = [{ name: 'admin', typed_config: { '@type': FILE_LOG, path: '/dev/null', log_format: { text_format_source: { inline_string: '%REQ(:PATH)%\n' } } } }];
    load({ configPath: tmp.file('access-logs.yaml', yamlOf(d)) });
  });

  refuses('refuses', [
    ['a TLS transport socket without its context', (d) => (d.static_resources.listeners[0].filter_chains[0].transport_socket = { name: 'envoy.transport_sockets.tls' }),
      'missing', 'static_resources.listeners[0].filter_chains[0].transport_socket'],
    ['a format with a command this proxy does not know', (d) => (hcm(d).access_log = [{ name: 'f', typed_config: { '@type': FILE_LOG, path: '/x', format: '%NOPE%' } }]),
      'unsupported', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0]'],
    ['a file logger without a path', (d) => (hcm(d).access_log = [{ name: 'f', typed_config: { '@type': FILE_LOG } }]), 'constraint', `${at}.typed_config.path`],
    ['a filter this proxy does not implement, with why', (d) => (hcm(d).access_log = [{ name: 'f', filter: { traceable_filter: {} }, typed_config: { '@type': FILE_LOG, path: '/x' } }]),
      'unsupported_field', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0].filter.traceable_filter'],
    ['a typed_config that is not an access logger', (d) => (hcm(d).access_log = [{ name: 'f', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }]),
      'wrong_extension', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0]'],
    ['a bad admin access log format', (d) => ((d.admin as Record<string, unknown>).access_log = [{ name: 'f', typed_config: { '@type': FILE_LOG, path: '/x', format: '%START_TIME(%Q)%' } }]),
      'unsupported', 'admin.access_log[0]'],
  ]);
});

describe('stats sinks', () => {
  const HYSTRIX = 'type.googleapis.com/envoy.config.metrics.v3.HystrixSink';
  refuses('refuse', [
    ['two Hystrix sinks', (d) => (d.stats_sinks = [{ name: 'a', typed_config: { '@type': HYSTRIX } }, { name: 'b', typed_config: { '@type': HYSTRIX } }]),
      'duplicate', 'stats_sinks[1]'],
    ['a sink this proxy does not implement, by name', (d) => (d.stats_sinks = [{ name: 'envoy.stat_sinks.metrics_service' }]), 'unsupported_extension', 'stats_sinks[0]'],
    ['a sink this proxy does not implement, by type', (d) => (d.stats_sinks = [{ name: 's', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsConfig' } }]),
      'unsupported_extension', 'stats_sinks[0].typed_config'],
    ['statsd over TCP to a cluster that is not in static_resources', (d) => (d.stats_sinks = [{ name: 's', typed_config: { '@type': 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink', tcp_cluster_name: 'c' } }]),
      'unknown_reference', 'stats_sinks[0].typed_config.tcp_cluster_name'],
    ['a filter given as a stats sink', (d) => (d.stats_sinks = [{ name: 's', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }]),
      'wrong_extension', 'stats_sinks[0]'],
  ]);
});

describe('TLS contexts in the bootstrap', () => {
  const pki = makePki();
  after(() => pki.remove());
  const server = pki.leaf('server', { sans: ['DNS:example.com'], serial: '01' });
  const stranger = pki.leaf('stranger', { sans: ['DNS:stranger.test'], serial: '02' });
  const chain = (d: Record<string, any>) => d.static_resources.listeners[0].filter_chains[0];

  it('loads a listener and a cluster context, reading the files once', () => {
    const d = minimalBootstrap() as Record<string, any>;
    chain(d).transport_socket = downstreamTls(server, { alpn: ['h2', 'http/1.1'] });
    d.static_resources.clusters[0].transport_socket = { name: 'envoy.transport_sockets.tls', typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'example.com' } };
    const loaded = load({ configPath: tmp.file('tls.yaml', yamlOf(d)) });
    assert.deepEqual(Object.keys(loaded.tls.listeners), ['ingress#0']);
    assert.equal(loaded.tls.listeners['ingress#0']!.certificates[0]!.chain.pem, server.cert);
    assert.deepEqual(loaded.tls.listeners['ingress#0']!.alpn, ['h2', 'http/1.1']);
    assert.equal(loaded.tls.clusters.backend!.sni, 'example.com');
  });

  it('reports a missing certificate file once, by its field, with no follow-on error', () => {
    const d = minimalBootstrap() as Record<string, any>;
    chain(d).transport_socket = downstreamTls({ ...server, certPath: '/nonexistent/cert.pem' });
    const errors = errorsOf({ configPath: tmp.file('missing-cert.yaml', yamlOf(d)) });
    assert.deepEqual(errors.map((e) => [e.code, e.path.replace(/^.*common_tls_context\./, '')]), [['unreadable', 'tls_certificates[0].certificate_chain.filename']]);
  });

  it('reports every problem of a file in one run: a field it cannot read does not hide an extension it refuses', () => {
    const d = minimalBootstrap() as Record<string, any>;
    const hcm = d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
    hcm.bogus_field = 1;
    hcm.http_filters.unshift({ name: 'envoy.filters.http.jwt_authn', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication' } });
    d.static_resources.clusters[0].preconnect_policy = { per_upstream_preconnect_ratio: 1.5 };
    const errors = errorsOf({ configPath: tmp.file('many.yaml', yamlOf(d)) });
    assert.deepEqual(errors.map((e) => [e.code, e.path]).sort(), [
      ['unknown_field', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.bogus_field'],
      ['unsupported_extension', 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config'],
      ['unsupported_field', 'static_resources.clusters[0].preconnect_policy'],
    ].sort(), errors.join('\n'));
  });

  refuses('refuse', [
    ['a key that is not the certificate\'s', (d) => (chain(d).transport_socket = downstreamTls({ ...server, keyPath: stranger.keyPath })),
      'load_failed', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config'],
    ['a certificate file that does not exist', (d) => (chain(d).transport_socket = downstreamTls({ ...server, certPath: '/nonexistent/cert.pem' })),
      'unreadable', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificates[0].certificate_chain.filename'],
    ['a listener context without a certificate', (d) => (chain(d).transport_socket = { name: 'tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE } }),
      'missing', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificates'],
    ['client certificates required with nothing to verify them against', (d) => (chain(d).transport_socket = downstreamTls(server, { context: { require_client_certificate: true } })),
      'missing', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.require_client_certificate'],
    ['an upstream context on a listener', (d) => (chain(d).transport_socket = { name: 'tls', typed_config: { '@type': UPSTREAM_TLS_TYPE } }),
      'wrong_extension', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config'],
    ['a static secret the bootstrap does not have (Envoy: Unknown static secret)', (d) => (chain(d).transport_socket = { name: 'tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificate_sds_secret_configs: [{ name: 's' }] } } }),
      'unknown_reference', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].name'],
    ['an SDS source over ADS without ads_config', (d) => (chain(d).transport_socket = { name: 'tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificate_sds_secret_configs: [{ name: 's', sds_config: { ads: {} } }] } } }),
      'missing', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].sds_config.ads'],
    ['watched_directory outside a secret from SDS', (d) => (chain(d).transport_socket = { name: 'tls', typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificates: [{ certificate_chain: { inline_string: 'x' }, private_key: { inline_string: 'y' }, watched_directory: { path: '/tmp' } }] } } }),
      'unsupported', 'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificates[0].watched_directory'],
    ['two filter chains with the same match', (d) => d.static_resources.listeners[0].filter_chains.push({ ...chain(d) }),
      'duplicate', 'static_resources.listeners[0].filter_chains[1]'],
    ['a listener filter other than the TLS inspector', (d) => (d.static_resources.listeners[0].listener_filters = [{ name: 'envoy.filters.listener.http_inspector' }]),
      'unsupported_extension', 'static_resources.listeners[0].listener_filters[0]'],
  ]);
});
