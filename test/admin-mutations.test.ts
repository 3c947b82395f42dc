import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { minimalBootstrap, ROUTER_TYPE } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { alive, httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The seed's rule for every mutating endpoint, checked on all of them at once: GET (or any
 * method but POST) answers 400 and changes nothing. The list comes from /help, so a new
 * mutating endpoint without a check here fails the first test.
 */

const tmp = tempDir();
let upstream: Upstream;
let proxy: RunningProxy;
const admin = (path: string, method = 'GET') => httpRequest(`http://${proxy.admin}${path}`, { method });

before(async () => {
  upstream = await startUpstream('A');
  const d = minimalBootstrap() as Record<string, any>;
  d.admin.address.socket_address.port_value = 0;
  d.admin.profile_path = join(tmp.dir, 'prof');
  d.layered_runtime = { layers: [{ name: 'admin', admin_layer: {} }] };
  d.static_resources.listeners[0].address.socket_address.port_value = 0;
  d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = upstream.port;
  d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters = [
    { name: 'envoy.filters.http.tap', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.tap.v3.Tap', common_config: { admin_config: { config_id: 'demo' } } } },
    { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
  ];
  proxy = await startProxy(d, ['--concurrency', '2']);
  await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

/** Each mutating endpoint, asked by GET with the parameters that would make it act. */
const GETS: Record<string, string> = {
  '/allocprofiler': '/allocprofiler?enable=y',
  '/cpuprofiler': '/cpuprofiler?enable=y',
  '/drain_listeners': '/drain_listeners',
  '/healthcheck/fail': '/healthcheck/fail',
  '/healthcheck/ok': '/healthcheck/ok',
  '/heapprofiler': '/heapprofiler?enable=y',
  '/logging': '/logging?level=trace',
  '/quitquitquit': '/quitquitquit',
  '/reopen_logs': '/reopen_logs',
  '/reset_counters': '/reset_counters',
  '/runtime_modify': '/runtime_modify?probe.key=1',
  '/stats/recentlookups/clear': '/stats/recentlookups/clear',
  '/stats/recentlookups/disable': '/stats/recentlookups/disable',
  '/stats/recentlookups/enable': '/stats/recentlookups/enable',
  '/tap': '/tap',
};

describe('every mutating admin endpoint', () => {
  it('is listed here (the list is read from /help)', async () => {
    const help = (await admin('/help')).body;
    const mutating = [...help.matchAll(/^ {2}(\S+) \(POST\):/gm)].map((m) => m[1]!).sort();
    assert.deepEqual(mutating, Object.keys(GETS).sort());
  });

  it('answers GET, PUT and DELETE with 400 and changes nothing', async () => {
    const requests = async () => Number(/: (\d+)/.exec((await admin('/stats?filter=^http\\.ingress\\.downstream_rq_total$')).body)?.[1]);
    const before = await requests();
    assert.ok(before > 0);
    for (const get of Object.values(GETS)) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const r = await admin(get, method);
        assert.deepEqual([r.status, r.body], [400, `Method ${method} not allowed, POST required.`], `${method} ${get}`);
      }
    }
    // Nothing happened:
    assert.ok(alive(proxy.pid), 'quitquitquit did not quit');
    assert.deepEqual([(await admin('/ready')).status, (await admin('/ready')).body], [200, 'LIVE\n'], 'no health-check failure, no drain');
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}/`)).status, 200, 'the listener still serves');
    assert.equal(await requests(), before + 1, 'counters were not reset');
    assert.ok(!('probe.key' in JSON.parse((await admin('/runtime')).body).entries), 'no runtime override');
    assert.match((await admin('/logging', 'POST')).body, /admin: info/, 'log levels unchanged');
    assert.ok(!existsSync(join(tmp.dir, 'prof.main.cpuprofile')), 'no CPU profiler started');
    assert.equal((await admin('/heapprofiler?enable=n', 'POST')).body, 'Fail to stop heap profiler: not started');
    assert.match((await admin('/stats/recentlookups')).body, /^Lookup tracking is not enabled/);
    assert.equal((await admin('/tap', 'POST')).body, '/tap requires a JSON/YAML body', 'no tap session attached');
  });
});
