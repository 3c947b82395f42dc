import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Listeners from a file (lds_config.path_config_source), applied live to running workers: a new
 * listener's socket reaches them on their socket channel; a change to filter chains only is made
 * in place; any other change replaces the listener on the same socket while the old one drains;
 * a removed listener stops accepting; a refused listener keeps its earlier version.
 */

const tmp = tempDir();
let a: Upstream;
let b: Upstream;
let proxy: RunningProxy;
const ldsPath = join(tmp.dir, 'lds.yaml');
const LISTENER = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const DRAIN_TIME_S = 2;

function listener(name: string, cluster: string, extra: Record<string, unknown> = {}, port = 0): Record<string, unknown> {
  return {
    '@type': LISTENER,
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: port } },
    filter_chains: [{ filters: [hcmFilter(name, [{ match: { prefix: '/' }, route: { cluster } }])] }],
    ...extra,
  };
}
let renames = 0;
/** Publishes a version: written beside the path, then renamed onto it (JSON is YAML). */
function publish(version: string, listeners: Record<string, unknown>[]): void {
  const next = join(tmp.dir, `.lds-${++renames}.yaml`);
  writeFileSync(next, JSON.stringify({ version_info: version, resources: listeners }));
  renameSync(next, ldsPath);
}
const stat = (name: string) => statValue(proxy, name);
const waitForStat = (name: string, value: number) => waitFor(`${name} to be ${value}`, async () => ((await stat(name)) === value ? true : undefined));

/** The listeners /listeners shows now: name → port. */
async function ports(): Promise<Map<string, number>> {
  const json = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
  return new Map(json.listener_statuses.map((l) => [l.name, l.local_address.socket_address.port_value]));
}
async function portOf(name: string): Promise<number> {
  return waitFor(`listener ${name} to be listed`, async () => (await ports()).get(name));
}
const body = async (port: number) => (await httpRequest(`http://127.0.0.1:${port}/`)).body;
async function dump(): Promise<any> {
  const configs = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=dynamic_listeners`)).body).configs as any[];
  return new Map(configs.map((c) => [c.name, c]));
}

/** One request on a keep-alive agent's connection: the body and the Connection header it came back with. */
function keepAliveGet(agent: Agent, port: number): Promise<{ body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ body: text, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  a = await startUpstream('A');
  b = await startUpstream('B');
  writeFileSync(ldsPath, JSON.stringify({ version_info: '1', resources: [listener('dyn', 'a')] }));
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: { clusters: [staticCluster('a', a.port), staticCluster('b', b.port)] },
      dynamic_resources: { lds_config: { path_config_source: { path: ldsPath }, resource_api_version: 'V3' } },
    },
    ['--concurrency', '2', '--drain-time-s', String(DRAIN_TIME_S), '--drain-strategy', 'immediate'],
  );
});

after(async () => {
  await stopAllProxies();
  await a.close();
  await b.close();
  tmp.cleanup();
});

describe('listeners from a file (LDS)', () => {
  it('serves the file\'s listeners from the start, with their version in /config_dump', async () => {
    const port = await portOf('dyn');
    assert.equal(await body(port), 'A');
    assert.equal(await stat('listener_manager.lds.update_success'), 1);
    assert.equal(await stat('listener_manager.listener_added'), 1);
    assert.equal(await stat('listener_manager.total_listeners_active'), 1);
    assert.equal(await stat('listener_manager.workers_started'), 1);
    const d = (await dump()).get('dyn');
    assert.equal(d.active_state.version_info, '1');
    assert.equal(d.active_state.listener.name, 'dyn');
  });

  it('changes filter chains in place: new connections take the new chain, a kept-alive one finishes on the old and is told to close', async () => {
    const port = await portOf('dyn');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.deepEqual(await keepAliveGet(agent, port), { body: 'A', connection: 'keep-alive' });
      publish('2', [listener('dyn', 'b')]);
      await waitFor('the new chain to serve new connections', async () => ((await body(port)) === 'B' ? true : undefined));
      assert.equal(await stat('listener_manager.listener_in_place_updated'), 1);
      assert.equal(await stat('listener_manager.listener_modified'), 1);
      assert.equal((await ports()).get('dyn'), port, 'the same socket');
      // The connection opened before the change is on the old chain, which drains (immediate): it is served and closed.
      assert.deepEqual(await keepAliveGet(agent, port), { body: 'A', connection: 'close' });
    } finally {
      agent.destroy();
    }
  });

  it('replaces a listener whose own settings change on the same socket; the old version drains for the drain time, shown as draining_state', async () => {
    const port = await portOf('dyn');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await keepAliveGet(agent, port)).body, 'B');
      publish('3', [listener('dyn', 'b', { stat_prefix: 'renamed' })]);
      await waitForStat('listener_manager.listener_modified', 2);
      assert.equal(await body(port), 'B');
      assert.ok((await stat('listener.renamed.downstream_cx_total')) >= 1, 'new connections go to the new version');
      assert.equal((await ports()).get('dyn'), port, 'the same socket');
      const d = (await dump()).get('dyn');
      assert.equal(d.active_state.version_info, '3');
      assert.equal(d.draining_state?.version_info, '2', 'the previous version drains');
      assert.equal(await stat('listener_manager.total_listeners_draining'), 1);
      assert.deepEqual(await keepAliveGet(agent, port), { body: 'B', connection: 'close' });
      await waitForStat('listener_manager.total_listeners_draining', 0);
      assert.equal((await dump()).get('dyn').draining_state, undefined);
    } finally {
      agent.destroy();
    }
  });

  it('adds and removes listeners: a removed one stops accepting, its socket closes', async () => {
    publish('4', [listener('dyn', 'b', { stat_prefix: 'renamed' }), listener('extra', 'a')]);
    const extra = await portOf('extra');
    assert.equal(await body(extra), 'A');
    assert.equal(await stat('listener_manager.total_listeners_active'), 2);
    publish('5', [listener('dyn', 'b', { stat_prefix: 'renamed' })]);
    await waitFor('extra to leave /listeners', async () => ((await ports()).has('extra') ? undefined : true));
    assert.equal(await stat('listener_manager.listener_removed'), 1);
    await waitFor('extra\'s port to refuse connections', () =>
      new Promise<true | undefined>((resolve) => {
        const s = connect(extra, '127.0.0.1');
        s.on('connect', () => {
          s.destroy();
          resolve(undefined);
        });
        s.on('error', () => resolve(true));
      }),
    );
  });

  it('refuses a bad listener alone: its siblings apply, it keeps no earlier version, error_state says why', async () => {
    const rejectedBefore = await stat('listener_manager.lds.update_rejected');
    const unwritable = listener('unwritable', 'a') as any;
    unwritable.filter_chains[0].filters[0].typed_config.access_log = [
      { name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: join(tmp.dir, 'no-such-dir', 'access.log') } },
    ];
    // A Lua script that does not load (Envoy's script load error): refused at the update, not when a worker loads it.
    const scripted = listener('scripted', 'a') as any;
    scripted.filter_chains[0].filters[0].typed_config.http_filters.unshift({ name: 'envoy.filters.http.lua', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua', inline_code: 'local m = require("not.here")' } });
    publish('6', [listener('dyn', 'b', { stat_prefix: 'renamed' }), listener('bad', 'nowhere'), unwritable, scripted, listener('good', 'a')]);
    const good = await portOf('good');
    assert.equal(await body(good), 'A');
    assert.equal(await stat('listener_manager.lds.update_rejected'), rejectedBefore + 1);
    assert.equal((await ports()).has('bad'), false);
    const d = await dump();
    assert.match(d.get('bad').error_state.details, /unknown cluster 'nowhere'/);
    assert.equal(d.get('bad').error_state.failed_configuration.name, 'bad');
    assert.match(d.get('unwritable').error_state.details, /unable to open access log file '.*no-such-dir\/access\.log'/);
    assert.match(d.get('scripted').error_state.details, /http_filters\[0\]\.typed_config\.inline_code: script load error: .*module 'not\.here' not found/);
    assert.equal((await ports()).has('scripted'), false);
    // One readable place for all of it (beyond Envoy).
    const status = (await httpRequest(`http://${proxy.admin}/config_status`)).body;
    assert.match(status, /^listener good, active, version '6', since \S+Z$/m);
    assert.match(status, /^listener bad, refused, no version\n {2}refused version '6' at \S+Z: .*unknown cluster 'nowhere'/m);
    const json = JSON.parse((await httpRequest(`http://${proxy.admin}/config_status?format=json`)).body);
    assert.deepEqual(
      json.resources.find((r: any) => r.name === 'bad'),
      { type: 'listener', name: 'bad', state: 'refused', client_status: 'NACKED', error_state: { details: d.get('bad').error_state.details, last_update_attempt: d.get('bad').error_state.last_update_attempt, version_info: '6' } },
    );
    // The version stays the last one accepted whole.
    const all = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump`)).body).configs.find((c: any) => c['@type'].endsWith('ListenersConfigDump'));
    assert.equal(all.version_info, '5');
  });

  it('refuses a listener on an address another listener serves, naming both', async () => {
    const good = await portOf('good');
    publish('7', [listener('dyn', 'b', { stat_prefix: 'renamed' }), listener('good', 'a'), listener('clash', 'a', {}, good)]);
    await waitFor('the clash to be refused', async () => ((await dump()).get('clash')?.error_state ? true : undefined));
    assert.match((await dump()).get('clash').error_state.details, new RegExp(`address '127\\.0\\.0\\.1:${good}' is already used by listener 'good'`));
  });

  it('a replacement worker serves the dynamic listeners too', async () => {
    const port = await portOf('good');
    // Every worker, found by its command line (the admin process stays).
    const workerPids = proxy.children().filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker_'));
    assert.equal(workerPids.length, 2);
    for (const pid of workerPids) process.kill(pid, 'SIGKILL');
    await waitFor('replacement workers to serve the dynamic listener', async () => {
      try {
        return (await body(port)) === 'A' ? true : undefined;
      } catch {
        return undefined;
      }
    });
  });

  it('after /drain_listeners, additions are not made (as Envoy: not an error)', async () => {
    const drained = await httpRequest(`http://${proxy.admin}/drain_listeners`, { method: 'POST' });
    assert.equal(drained.status, 200);
    const rejectedBefore = await stat('listener_manager.lds.update_rejected');
    const successBefore = await stat('listener_manager.lds.update_success');
    publish('8', [listener('dyn', 'b', { stat_prefix: 'renamed' }), listener('good', 'a'), listener('late', 'a')]);
    await waitForStat('listener_manager.lds.update_success', successBefore + 1);
    assert.equal(await stat('listener_manager.lds.update_rejected'), rejectedBefore);
    assert.equal((await ports()).has('late'), false);
    assert.match(proxy.output(), /listener 'late' not added: listeners were stopped by \/drain_listeners/);
  });
});
