import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Clusters from a file (cds_config.path_config_source), with Envoy's semantics: read at start,
 * read again only when a file is renamed onto the path, each cluster checked alone.
 */

const tmp = tempDir();
let a: Upstream;
let b: Upstream;
let proxy: RunningProxy;
let port: number;
const cdsPath = join(tmp.dir, 'cds.yaml');

const CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
function cluster(name: string, upstreamPort: number, extra = ''): string {
  return `- {"@type": ${CLUSTER}, name: ${name}, type: STATIC, connect_timeout: 1s${extra}, load_assignment: {cluster_name: ${name}, endpoints: [{lb_endpoints: [{endpoint: {address: {socket_address: {address: 127.0.0.1, port_value: ${upstreamPort}}}}}]}]}}`;
}
function response(version: string, clusters: string[]): string {
  return `version_info: "${version}"\nresources:\n${clusters.join('\n')}\n`;
}
let renames = 0;
/** The way to publish a new version: write beside the path, then rename onto it. */
function publish(text: string): void {
  const next = join(tmp.dir, `.cds-${++renames}.yaml`);
  writeFileSync(next, text);
  renameSync(next, cdsPath);
}
const body = async (path = '/') => (await httpRequest(`http://127.0.0.1:${port}${path}`)).body;
const stat = (name: string) => statValue(proxy, name);
const waitForStat = (name: string, value: number) => waitFor(`${name} to be ${value}`, async () => ((await stat(name)) === value ? true : undefined));

before(async () => {
  a = await startUpstream('A');
  b = await startUpstream('B');
  writeFileSync(cdsPath, response('1', [cluster('dynamic', a.port)]));
  const listener = routesListener('ingress', [{ match: { prefix: '/' }, route: { cluster: 'dynamic' } }]) as any;
  // As in Envoy: a static route table naming a cluster that CDS brings must not be validated at load.
  listener.filter_chains[0].filters[0].typed_config.route_config.validate_clusters = false;
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [listener] },
      dynamic_resources: { cds_config: { path_config_source: { path: cdsPath }, resource_api_version: 'V3' } },
    },
    ['--concurrency', '2'],
  );
  port = proxy.ports.get('ingress')!;
});

after(async () => {
  await stopAllProxies();
  await a.close();
  await b.close();
  tmp.cleanup();
});

describe('clusters from a file (CDS)', () => {
  it('serves the file\'s clusters from the start, marked added via the API, with their version', async () => {
    assert.equal(await body(), 'A');
    assert.equal(await stat('cluster_manager.cds.update_success'), 1);
    assert.equal(await stat('cluster_manager.cluster_added'), 1);
    assert.equal(await stat('cluster_manager.active_clusters'), 1);
    assert.match((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^dynamic::added_via_api::true$/m);
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_active_clusters`)).body);
    assert.deepEqual(dump.configs.map((c: { version_info: string; cluster: { name: string } }) => [c.version_info, c.cluster.name]), [['1', 'dynamic']]);
  });

  it('ignores a write in place, and applies a file renamed onto the path', async () => {
    writeFileSync(cdsPath, response('in-place', [cluster('dynamic', b.port)]));
    publish(response('2', [cluster('dynamic', b.port)]));
    await waitFor('the renamed version to serve', async () => ((await body()) === 'B' ? true : undefined));
    // Two reads in all: at start and after the rename; the write in place before it was never read.
    assert.equal(await stat('cluster_manager.cds.update_attempt'), 2);
    assert.equal(await stat('cluster_manager.cluster_modified'), 1);
    for (let i = 0; i < 6; i++) assert.equal(await body(), 'B', 'every worker has the new cluster');
  });

  it('keeps the old version of a refused cluster, applies its valid siblings, and counts update_rejected', async () => {
    publish(response('3', [cluster('dynamic', a.port, ', lb_policy: CLUSTER_PROVIDED'), cluster('second', a.port)]));
    await waitForStat('cluster_manager.cds.update_rejected', 1);
    assert.equal(await body(), 'B', 'the refused version did not replace the served one');
    assert.match((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^second::added_via_api::true$/m, 'the valid sibling applied');
    assert.equal(await stat('cluster_manager.active_clusters'), 2);
    assert.match(proxy.output(), /filesystem config update rejected .*version '3'.*cluster 'dynamic': lb_policy: CLUSTER_PROVIDED is not supported/);
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_active_clusters`)).body);
    const dynamic = dump.configs.find((c: { cluster?: { name: string } }) => c.cluster?.name === 'dynamic');
    assert.equal(dynamic.version_info, '2', 'the version still served');
    assert.match(dynamic.error_state.details, /lb_policy: CLUSTER_PROVIDED is not supported/, "Envoy's error_state: why the last update of it was refused");
    assert.ok(Date.parse(dynamic.error_state.last_update_attempt) > 0);
  });

  it('lets a request in flight finish on the cluster it started with while new requests use the changed one', async () => {
    const held = httpRequest(`http://127.0.0.1:${port}/hold?key=cds`);
    await waitFor('the request held at B', () => (b.held('cds') === 1 ? true : undefined));
    publish(response('3b', [cluster('dynamic', a.port), cluster('second', a.port)]));
    await waitFor('new requests to reach A', async () => ((await body()) === 'A' ? true : undefined));
    b.release('cds');
    const r = await held;
    assert.deepEqual([r.status, r.body], [200, 'B held']);
  });

  it('removes a cluster the next file leaves out: its route answers 503, and the removal is counted', async () => {
    publish(response('4', [cluster('second', a.port)]));
    await waitForStat('cluster_manager.cluster_removed', 1);
    const r = await httpRequest(`http://127.0.0.1:${port}/`);
    assert.equal(r.status, 503);
    assert.doesNotMatch((await httpRequest(`http://${proxy.admin}/clusters`)).body, /^dynamic::/m);
    assert.match(proxy.output(), /cluster 'dynamic' was removed while the static route configuration without a name still route to it: those requests get 503/, 'reported, not a silent 503');
  });

  it('changes nothing when the file cannot be parsed (update_failure)', async () => {
    publish('version_info: "5"\nresources: [ {{{ not yaml');
    await waitForStat('cluster_manager.cds.update_failure', 1);
    assert.equal(await stat('cluster_manager.active_clusters'), 1);
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_active_clusters`)).body);
    assert.deepEqual(dump.configs.map((c: { cluster: { name: string } }) => c.cluster.name), ['second']);
  });

  it('changes nothing when a resource cannot be decoded (an unknown enum value), its valid siblings neither: update_failure, as Envoy\'s loader fails the file', async () => {
    publish(response('5b', [cluster('second', a.port), cluster('third', a.port), cluster('broken', a.port, ', lb_policy: NO_SUCH_POLICY')]));
    await waitForStat('cluster_manager.cds.update_failure', 2);
    assert.equal(await stat('cluster_manager.active_clusters'), 1, 'third was not added');
    assert.match(proxy.output(), /filesystem config update failure: .*resources\[2\]\.lb_policy: unknown value "NO_SUCH_POLICY"/);
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_active_clusters`)).body);
    assert.deepEqual(dump.configs.map((c: { cluster: { name: string } }) => c.cluster.name), ['second']);
  });

  it("changes nothing when a cluster breaks its message's rules (an empty bound: cleanup_interval: 0s), its valid siblings neither: update_rejected, as Envoy's decoder refuses the file", async () => {
    const rejected = await stat('cluster_manager.cds.update_rejected');
    publish(response('5c', [cluster('second', a.port), cluster('third', a.port), cluster('broken', a.port, ', cleanup_interval: 0s')]));
    await waitForStat('cluster_manager.cds.update_rejected', rejected + 1);
    assert.equal(await stat('cluster_manager.active_clusters'), 1, 'third was not added');
    assert.match(proxy.output(), /filesystem config update rejected \(.*version '5c'\), nothing of it applied: cluster 'broken': cleanup_interval: value must be greater than 0s/);
    assert.equal(await stat('cluster_manager.cds.update_failure'), 2, 'it was read: a rejection, not a failure');
  });

  it('counts unknown fields in a cluster (server.dynamic_unknown_fields) and applies it, by default', async () => {
    publish(response('6', [cluster('second', b.port, ', no_such_field: 1')]));
    await waitForStat('server.dynamic_unknown_fields', 1);
    assert.equal(await stat('cluster_manager.cds.update_success'), 5);
  });
});
