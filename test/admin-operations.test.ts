import assert from 'node:assert/strict';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { closedPort } from './helpers/upstream.js';

const tmp = tempDir();
const logPath = join(tmp.dir, 'proxy.log');
let proxy: RunningProxy;
const admin = (path: string, method = 'GET') => httpRequest(`http://${proxy.admin}${path}`, { method });

before(async () => {
  const down = await closedPort();
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'web',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': HCM_TYPE,
            stat_prefix: 'web',
            route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'down' } }] }] },
            http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
          } }] }],
        }],
        clusters: [{ name: 'down', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'down', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: down } } } }] }] } }],
      },
    },
    ['--concurrency', '1', '--log-path', logPath, '--file-flush-interval-msec', '50'],
  );
});

after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

describe('/hot_restart_version', () => {
  it('is what --hot-restart-version prints, with no newline', async () => {
    const r = await admin('/hot_restart_version');
    assert.equal(r.body, (await runProxy(['--hot-restart-version'])).stderr);
    assert.match(r.body, /^\d+\.\d+$/);
  });
});

describe('/memory', () => {
  it('sums the tree\'s allocation figures as uint64 strings, per process on request', async () => {
    const r = await admin('/memory?per_process');
    assert.equal(r.headers['content-type'], 'application/json');
    const m = JSON.parse(r.body);
    for (const field of ['allocated', 'heap_size', 'pageheap_unmapped', 'pageheap_free', 'total_thread_cache', 'total_physical_bytes']) assert.match(m[field], /^\d+$/, field);
    assert.ok(Number(m.allocated) > 0 && Number(m.total_physical_bytes) > Number(m.allocated));
    assert.deepEqual(Object.keys(m.processes).sort(), ['admin', 'main', 'worker_0']);
    const sum = Object.values(m.processes as Record<string, { allocated: string }>).reduce((a, p) => a + Number(p.allocated), 0);
    assert.equal(sum, Number(m.allocated));
  });
});

describe('/logging', () => {
  it('lists the loggers on POST (and refuses GET)', async () => {
    assert.equal((await admin('/logging')).status, 400);
    const r = await admin('/logging', 'POST');
    assert.match(r.body, /^active loggers:\n {2}a2a: info\n {2}admin: info\n/);
    assert.ok(r.body.endsWith('\n\n'));
  });

  it('changes levels in every process: a worker\'s router logs debug lines once asked', async () => {
    const r = await admin('/logging?router=debug', 'POST');
    assert.match(r.body, /^ {2}router: debug$/m);
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/x`); // a connect failure, logged at debug by the router
    await waitFor('the worker\'s debug line', () => readFileSync(logPath, 'utf8').includes('][worker_0][debug][router]') || undefined);
  });

  it('sets all levels, several at once, with Envoy\'s errors', async () => {
    assert.match((await admin('/logging?level=warning', 'POST')).body, /^ {2}upstream: warning$/m);
    const several = (await admin('/logging?paths=http:error,router:critical', 'POST')).body;
    assert.match(several, /^ {2}http: error$/m);
    assert.match(several, /^ {2}router: critical$/m);
    // The seed's syntax, name=level, does the same.
    const seed = (await admin('/logging?paths=router=debug,config=trace', 'POST')).body;
    assert.match(seed, /^ {2}router: debug$/m);
    assert.match(seed, /^ {2}config: trace$/m);
    const warn = await admin('/logging?level=warn', 'POST');
    assert.equal(warn.status, 400);
    assert.match(warn.body, /^error: unknown logger level\n\nusage: \/logging\?<name>=<level> \(change single level\)\n/);
    assert.match(warn.body, /^levels: trace debug info warning error critical off \nactive loggers:\n/m);
    assert.match((await admin('/logging?nosuch=debug', 'POST')).body, /^error: unknown logger name\n/);
    assert.match((await admin('/logging?paths=http:,router:debug', 'POST')).body, /^error: empty logger name or empty logger level\n/);
    assert.match((await admin('/logging?http=debug&router=debug', 'POST')).body, /^error: invalid number of parameters\n/);
    assert.match((await admin('/logging?level=&paths=', 'POST')).body, /^active loggers:/); // empty form fields are ignored
    await admin('/logging?level=info', 'POST');
  });
});

describe('/reopen_logs', () => {
  it('reopens every process\'s log file (POST only)', async () => {
    assert.equal((await admin('/reopen_logs')).status, 400);
    renameSync(logPath, `${logPath}.1`);
    assert.equal((await admin('/reopen_logs', 'POST')).body, 'OK\n');
    await admin('/logging?router=debug', 'POST'); // answered once every worker logs at debug
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/x`);
    await waitFor('a worker line in the reopened file', () => {
      try {
        return readFileSync(logPath, 'utf8').includes('][worker_0][debug][router]') || undefined;
      } catch {
        return undefined;
      }
    });
  });
});

describe('/clusters', () => {
  it('prints every cluster, its thresholds and its hosts\' figures in Envoy\'s text layout', async () => {
    await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/x`); // a connect failure
    const body = (await admin('/clusters')).body;
    const lines = body.trim().split('\n');
    assert.deepEqual(lines.slice(0, 10), [
      'down::observability_name::down',
      'down::default_priority::max_connections::1024',
      'down::default_priority::max_pending_requests::1024',
      'down::default_priority::max_requests::1024',
      'down::default_priority::max_retries::3',
      'down::high_priority::max_connections::1024',
      'down::high_priority::max_pending_requests::1024',
      'down::high_priority::max_requests::1024',
      'down::high_priority::max_retries::3',
      'down::added_via_api::false',
    ]);
    const host = /^down::(127\.0\.0\.1:\d+)::cx_active::0$/m.exec(body)![1]!;
    const names = lines.filter((l) => l.startsWith(`down::${host}::`)).map((l) => l.split('::')[2]);
    assert.deepEqual(names, ['cx_active', 'cx_connect_fail', 'cx_total', 'rq_active', 'rq_error', 'rq_success', 'rq_timeout', 'rq_total', 'hostname', 'health_flags', 'weight', 'region', 'zone', 'sub_zone', 'canary', 'priority', 'success_rate', 'local_origin_success_rate']);
    assert.match(body, new RegExp(`^down::${host.replace(/\./g, '\\.')}::cx_connect_fail::[1-9]\\d*$`, 'm'));
    assert.match(body, /::health_flags::healthy$/m);
    assert.match(body, /::success_rate::-1$/m);
  });

  it('is envoy.admin.v3.Clusters with format=json: defaults omitted, values as strings, HIGH thresholds tagged', async () => {
    const r = await admin('/clusters?format=json');
    assert.equal(r.headers['content-type'], 'application/json');
    const [cluster] = JSON.parse(r.body).cluster_statuses;
    assert.equal(cluster.name, 'down');
    assert.equal(cluster.added_via_api, undefined);
    assert.deepEqual(cluster.circuit_breakers.thresholds[0], { max_connections: 1024, max_pending_requests: 1024, max_requests: 1024, max_retries: 3 });
    assert.equal(cluster.circuit_breakers.thresholds[1].priority, 'HIGH');
    const [host] = cluster.host_statuses;
    assert.equal(host.address.socket_address.address, '127.0.0.1');
    assert.deepEqual(host.health_status, { eds_health_status: 'HEALTHY' });
    assert.equal(host.weight, 1);
    const fail = host.stats.find((s: { name: string }) => s.name === 'cx_connect_fail');
    assert.match(fail.value, /^[1-9]\d*$/);
    assert.deepEqual(host.stats.find((s: { name: string }) => s.name === 'rq_active'), { type: 'GAUGE', name: 'rq_active' });
  });
});

describe('/certs', () => {
  it('lists no certificates while no TLS context can be configured, as Envoy prints a server without TLS', async () => {
    const r = await admin('/certs');
    assert.deepEqual([r.status, r.headers['content-type'], r.body], [200, 'application/json', '{\n "certificates": []\n}\n']);
  });
});
