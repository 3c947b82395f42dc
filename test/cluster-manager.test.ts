import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { httpListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies } from './helpers/proxy.js';

/** The supervisor's cluster manager: the bootstrap's clusters, with Envoy's cluster_manager.* figures. */

after(() => stopAllProxies());

describe('the cluster manager', () => {
  it('counts the bootstrap clusters as added and active, marks them not added via the API, and keeps a hot-restart parent out of the gauge', async () => {
    const config = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { listeners: [httpListener('ingress', 0, 'a')], clusters: [staticCluster('a', 1), staticCluster('b', 2)] },
    };
    const common = ['--concurrency', '1', '--socket-path', `@proxy_cluster_manager_test_${process.pid}`];
    const e0 = await startProxy(config, common);
    assert.equal(await statValue(e0, 'cluster_manager.cluster_added'), 2);
    assert.equal(await statValue(e0, 'cluster_manager.active_clusters'), 2);
    const text = (await httpRequest(`http://${e0.admin}/clusters`)).body;
    assert.match(text, /^a::added_via_api::false$/m);
    assert.match(text, /^b::added_via_api::false$/m);
    const json = JSON.parse((await httpRequest(`http://${e0.admin}/clusters?format=json`)).body);
    assert.deepEqual(json.cluster_statuses.map((c: { name: string; added_via_api?: boolean }) => [c.name, c.added_via_api ?? false]), [['a', false], ['b', false]]);

    const e1 = await startProxy(config, ['--base-id', String(e0.baseId), ...common, '--restart-epoch', '1', '--parent-shutdown-time-s', '30']);
    assert.equal(await statValue(e1, 'cluster_manager.active_clusters'), 2, "Envoy's NeverImport: the draining parent's clusters are not added");
    assert.equal(await statValue(e1, 'cluster_manager.cluster_added'), 4, 'a counter continues across epochs: each epoch added its two');
    await e1.stop();
  });
});
