import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { redact } from '../admin/endpoints/config-dump.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';

let proxy: RunningProxy;
const dump = (query = '') => httpRequest(`http://${proxy.admin}/config_dump${query}`);

before(async () => {
  // The routing example, with ports the kernel chooses.
  const doc = load(readFileSync('examples/routing.yaml', 'utf8')) as any;
  doc.admin.address.socket_address.port_value = 0;
  for (const l of doc.static_resources.listeners) l.address.socket_address.port_value = 0;
  proxy = await startProxy(doc, ['--concurrency', '1']);
});
after(stopAllProxies);

describe('/config_dump', () => {
  it('dumps bootstrap, clusters, listeners, route scopes, routes and secrets, in Envoy\'s order', async () => {
    const r = await dump();
    assert.equal(r.headers['content-type'], 'application/json');
    const { configs } = JSON.parse(r.body);
    assert.deepEqual(configs.map((c: { '@type': string }) => c['@type'].replace('type.googleapis.com/envoy.admin.v3.', '')), [
      'BootstrapConfigDump', 'ClustersConfigDump', 'ListenersConfigDump', 'ScopedRoutesConfigDump', 'RoutesConfigDump', 'SecretsConfigDump',
    ]);
    assert.equal(configs[0].bootstrap.node.user_agent_name, 'envoy');
    assert.equal(configs[1].static_clusters[0].cluster['@type'], 'type.googleapis.com/envoy.config.cluster.v3.Cluster');
    assert.equal(configs[1].static_clusters[0].cluster.connect_timeout, '0.250s');
    assert.equal(configs[2].static_listeners.length, 3);
    assert.equal(configs[4].static_route_configs[0].route_config.name, 'edge');
  });

  it('adds endpoints from live host state with include_eds', async () => {
    const { configs } = JSON.parse((await dump('?include_eds')).body);
    const eds = configs.find((c: { '@type': string }) => c['@type'].endsWith('EndpointsConfigDump'));
    const green = eds.static_endpoint_configs.find((e: { endpoint_config: { cluster_name: string } }) => e.endpoint_config.cluster_name === 'green').endpoint_config;
    assert.equal(green.endpoints[0].lb_endpoints[0].endpoint.hostname, 'localhost'); // a STRICT_DNS host, as resolved
    assert.equal(green.endpoints[0].lb_endpoints[0].health_status, 'HEALTHY');
    assert.deepEqual(green.policy, { overprovisioning_factor: 140 });
  });

  it('gives a repeated field\'s elements with resource, masked inside their Any', async () => {
    const { configs } = JSON.parse((await dump('?resource=static_clusters&mask=cluster.name')).body);
    assert.deepEqual(configs, [
      { '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump.StaticCluster', cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'blue' } },
      { '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump.StaticCluster', cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'green' } },
    ]);
    assert.equal((await dump('?resource=dynamic_active_clusters')).body, '{}\n');
  });

  it('filters by name_regex (a full match)', async () => {
    const blue = JSON.parse((await dump('?resource=static_clusters&name_regex=blu')).body);
    assert.deepEqual(blue, {}); // "blu" does not match all of "blue"
    const full = JSON.parse((await dump('?resource=static_clusters&name_regex=bl.*')).body);
    assert.equal(full.configs.length, 1);
  });

  it('applies a mask to each dump without resource, dropping dumps it does not fit', async () => {
    const { configs } = JSON.parse((await dump('?mask=static_clusters')).body);
    assert.equal(configs.length, 1);
    assert.deepEqual(Object.keys(configs[0]), ['@type', 'static_clusters']);
  });

  it('answers Envoy\'s errors, as text/plain', async () => {
    const cases: [string, number, string | RegExp][] = [
      ['?resource=version_info', 400, 'version_info is not a repeated field. Use ?mask=version_info to get only this field'],
      ['?resource=nope', 404, 'nope not found in config dump'],
      ['?mask=bad', 400, 'FieldMask bad could not be successfully applied to any configs.'],
      ['?resource=static_clusters&mask=cluster.transport_socket_matches.name', 400, 'FieldMask paths: "cluster.transport_socket_matches.name"\n could not be successfully used.'],
      ['?name_regex=(bad', 400, /^INVALID_ARGUMENT: Error while parsing name_regex from \(bad: /],
    ];
    for (const [query, status, body] of cases) {
      const r = await dump(query);
      assert.equal(r.status, status, query);
      assert.equal(r.headers['content-type'], 'text/plain', query);
      if (typeof body === 'string') assert.equal(r.body, body, query);
      else assert.match(r.body, body, query);
    }
  });

  it('redacts every string under private_key and password', () => {
    assert.deepEqual(redact({ tls: { private_key: { filename: '/k.pem' }, password: { inline_string: 'x' }, cert: { filename: '/c.pem' } } }), {
      tls: { private_key: { filename: '[redacted]' }, password: { inline_string: '[redacted]' }, cert: { filename: '/c.pem' } },
    });
  });
});
