import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { minimalBootstrap, routesListener } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies } from './helpers/proxy.js';

/** Bootstrap fields Envoy's own test configurations carry: cluster_manager, flags_path. */

const tmp = tempDir();

after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

/** A bootstrap on port 0 with one listener answering directly. */
const served = (extra: object) => ({
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  static_resources: { listeners: [routesListener('front', [{ match: { prefix: '/' }, direct_response: { status: 200 } }])] },
  ...extra,
});

const state = async (admin: string) => (JSON.parse((await httpRequest(`http://${admin}/server_info`)).body) as { state: string }).state;

describe('Bootstrap.cluster_manager', () => {
  it('accepts an empty cluster_manager, and refuses its fields by name', async () => {
    const ok = await runProxy(['--mode', 'validate', '-c', tmp.file('cm.json', JSON.stringify({ ...minimalBootstrap(), cluster_manager: {} }))]);
    assert.equal(ok.code, 0, ok.stderr);
    const refused = await runProxy(['--mode', 'validate', '-c', tmp.file('cm-local.json', JSON.stringify({ ...minimalBootstrap(), cluster_manager: { local_cluster_name: 'here' } }))]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cluster_manager\.local_cluster_name: field 'local_cluster_name' of envoy\.config\.bootstrap\.v3\.ClusterManager is not supported by this proxy \(zone-aware routing is not supported\)/);
  });
});

describe('Bootstrap.flags_path', () => {
  it('starts failing health checks (DRAINING) when a `drain` file is there, until POST /healthcheck/ok', async () => {
    const flags = join(tmp.dir, 'flags');
    mkdirSync(flags);
    writeFileSync(join(flags, 'drain'), '');
    const proxy = await startProxy(served({ flags_path: flags }), ['--concurrency', '1']);
    assert.equal(await state(proxy.admin), 'DRAINING');
    assert.equal((await httpRequest(`http://${proxy.admin}/healthcheck/ok`, { method: 'POST' })).status, 200);
    assert.equal(await state(proxy.admin), 'LIVE');
    const plain = await startProxy(served({ flags_path: join(tmp.dir, 'empty-flags') }), ['--concurrency', '1']);
    assert.equal(await state(plain.admin), 'LIVE');
  });
});
