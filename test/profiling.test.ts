import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { minimalBootstrap } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * /cpuprofiler, /heapprofiler, /heap_dump and /contention against a running proxy with traffic:
 * Envoy's parameters and messages, and files that profiling tools open (V8's JSON formats).
 */

const tmp = tempDir();
let upstream: Upstream;
let proxy: RunningProxy;
let unwritable: RunningProxy;
const admin = (path: string, method = 'GET') => httpRequest(`http://${proxy.admin}${path}`, { method });
const post = (path: string) => admin(path, 'POST');
const ROLES = ['main', 'admin', 'worker_0', 'worker_1'];

function bootstrap(profilePath: string): object {
  const d = minimalBootstrap() as Record<string, any>;
  d.admin.address.socket_address.port_value = 0;
  d.admin.profile_path = profilePath;
  d.static_resources.listeners[0].address.socket_address.port_value = 0;
  d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = upstream.port;
  return d;
}

async function traffic(n = 200): Promise<void> {
  const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;
  for (let i = 0; i < n; i += 10) await Promise.all(Array.from({ length: 10 }, () => httpRequest(url)));
}

before(async () => {
  upstream = await startUpstream('A');
  proxy = await startProxy(bootstrap(join(tmp.dir, 'prof')), ['--concurrency', '2', '--enable-mutex-tracing']);
  unwritable = await startProxy(bootstrap(join(tmp.dir, 'no', 'such', 'dir', 'prof')), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

describe('/cpuprofiler', () => {
  it('takes exactly one parameter, enable=y|n, and only by POST', async () => {
    assert.equal((await admin('/cpuprofiler?enable=y')).status, 400);
    for (const q of ['', '?enable=x', '?enable=y&also=1', '?Enable=y']) {
      const r = await post(`/cpuprofiler${q}`);
      assert.deepEqual([r.status, r.body], [400, '?enable=<y|n>\n'], q);
    }
    assert.ok(!ROLES.some((role) => existsSync(join(tmp.dir, `prof.${role}.cpuprofile`))), 'nothing was started');
  });

  it('profiles every process and writes a V8 .cpuprofile for each when stopped', async () => {
    assert.deepEqual([(await post('/cpuprofiler?enable=y')).body, (await post('/cpuprofiler?enable=y')).body], ['OK\n', 'OK\n']);
    await traffic();
    const stopped = await post('/cpuprofiler?enable=n');
    assert.deepEqual([stopped.status, stopped.body], [200, 'OK\n']);
    for (const role of ROLES) {
      const profile = JSON.parse(readFileSync(join(tmp.dir, `prof.${role}.cpuprofile`), 'utf8')) as { nodes: { callFrame: { url: string } }[]; samples: number[]; startTime: number; endTime: number };
      assert.ok(profile.nodes.length > 1 && profile.samples.length > 0 && profile.endTime > profile.startTime, role);
    }
    const worker = JSON.parse(readFileSync(join(tmp.dir, 'prof.worker_0.cpuprofile'), 'utf8')) as { nodes: { callFrame: { url: string } }[] };
    assert.ok(worker.nodes.some((n) => n.callFrame.url.includes('/worker/http/')), 'the worker profile shows the HTTP code');
    assert.deepEqual((await post('/cpuprofiler?enable=n')).body, 'OK\n', 'stopping a stopped profiler is fine');
  });

  it('answers 500 when the profile path cannot be written, and starts nothing', async () => {
    const r = await httpRequest(`http://${unwritable.admin}/cpuprofiler?enable=y`, { method: 'POST' });
    assert.deepEqual([r.status, r.body], [500, 'failure to start the profiler']);
  });
});

describe('/heapprofiler', () => {
  it("follows Envoy's messages: not started, starting, already started, stopped with the files", async () => {
    assert.deepEqual([(await post('/heapprofiler?enable=n')).status, (await post('/heapprofiler?enable=n')).body], [400, 'Fail to stop heap profiler: not started']);
    assert.deepEqual((await post('/heapprofiler?enable=x')).body, '?enable=<y|n>\n');
    const started = await post('/heapprofiler?enable=y');
    assert.deepEqual([started.status, started.body], [200, 'Starting heap profiler']);
    const again = await post('/heapprofiler?enable=y');
    assert.deepEqual([again.status, again.body], [400, 'Fail to start heap profiler: already started']);
    await traffic();
    const stopped = await post('/heapprofiler?enable=n');
    assert.equal(stopped.status, 200);
    assert.match(stopped.body, /^Heap profiler stopped and data written to /);
    for (const role of ROLES) {
      const file = join(tmp.dir, `prof.${role}.heapprofile`);
      assert.ok(stopped.body.includes(file), `${stopped.body} names ${file}`);
      const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: { callFrame: unknown; children: unknown[] }; samples: unknown[] };
      assert.ok(profile.head.callFrame && Array.isArray(profile.samples), role);
      // A quiet supervisor may allocate too little to be sampled; a worker under load does not.
      if (role.startsWith('worker')) assert.ok(profile.head.children.length > 0, role);
    }
  });

  it('answers 500 when the profile path cannot be written, and is left stopped', async () => {
    const url = `http://${unwritable.admin}/heapprofiler`;
    const r = await httpRequest(`${url}?enable=y`, { method: 'POST' });
    assert.deepEqual([r.status, r.body], [500, 'Fail to start the heap profiler']);
    assert.equal((await httpRequest(`${url}?enable=n`, { method: 'POST' })).body, 'Fail to stop heap profiler: not started');
  });
});

describe('/allocprofiler', () => {
  it("follows Envoy's messages, and returns the V8 allocation profiles by process when it stops", async () => {
    assert.deepEqual([(await post('/allocprofiler?enable=n')).status, (await post('/allocprofiler?enable=n')).body], [400, 'Allocation profiler is not started']);
    assert.equal((await post('/allocprofiler')).body, '?enable=<y|n>\n');
    const started = await post('/allocprofiler?enable=y');
    assert.deepEqual([started.status, started.body], [200, 'OK\n']);
    assert.deepEqual([(await post('/allocprofiler?enable=y')).status, (await post('/allocprofiler?enable=y')).body], [400, 'Allocation profiler has already started']);
    await traffic();
    const stopped = await post('/allocprofiler?enable=n');
    assert.equal(stopped.status, 200);
    const profiles = JSON.parse(stopped.body) as Record<string, { head: { children: unknown[] }; samples: unknown[] }>;
    assert.deepEqual(Object.keys(profiles).sort(), [...ROLES].sort());
    assert.ok(profiles.worker_0!.head.children.length > 0, 'the worker under load allocated');
  });

  it('/memory/tcmalloc answers as an Envoy build without tcmalloc', async () => {
    const r = await httpRequest(`http://${proxy.admin}/memory/tcmalloc`);
    assert.deepEqual([r.status, r.body, r.headers['content-type']], [501, 'Envoy was not built with tcmalloc.\n', 'text/plain']);
  });
});

describe('/heap_dump', () => {
  it('returns a V8 heap snapshot of worker_0 by default, or of the process asked for, and removes its file', async () => {
    for (const [query, role] of [['', 'worker_0'], ['?process=worker_1', 'worker_1'], ['?process=admin', 'admin'], ['?process=main', 'main']] as const) {
      const r = await admin(`/heap_dump${query}`);
      assert.equal(r.status, 200, r.body.slice(0, 200));
      assert.equal(r.headers['content-type'], 'application/octet-stream');
      const name = /filename="(.+)"/.exec(String(r.headers['content-disposition']))![1]!;
      assert.ok(name.startsWith(`proxy-${role}-`), name);
      const snapshot = JSON.parse(r.body) as { snapshot: { meta: { node_fields: string[] }; node_count: number } };
      assert.ok(snapshot.snapshot.node_count > 1000);
      assert.ok(!existsSync(join(tmpdir(), name)), 'the temporary file is removed once sent');
    }
  });

  it('refuses a process that does not exist', async () => {
    const r = await admin('/heap_dump?process=worker_2');
    assert.deepEqual([r.status, r.body], [400, 'process must be main, admin or worker_0 … worker_1\n']);
  });
});

describe('/contention', () => {
  it('reports event-loop contention in the MutexStats shape with --enable-mutex-tracing', async () => {
    await admin('/heap_dump'); // a snapshot stalls worker_0's event loop for well over a millisecond
    const r = await admin('/contention');
    assert.equal(r.headers['content-type'], 'application/json');
    const stats = JSON.parse(r.body) as Record<string, string>;
    assert.deepEqual(Object.keys(stats), ['num_contentions', 'current_wait_cycles', 'lifetime_wait_cycles']);
    assert.ok(Object.values(stats).every((v) => /^\d+$/.test(v)), r.body);
    assert.ok(Number(stats.num_contentions) > 0 && Number(stats.lifetime_wait_cycles) >= Number(stats.current_wait_cycles) && Number(stats.current_wait_cycles) > 1e6, r.body);
  });

  it("says how to enable it otherwise, in Envoy's words", async () => {
    const r = await httpRequest(`http://${unwritable.admin}/contention`);
    assert.deepEqual([r.status, r.body], [200, 'Mutex contention tracing is not enabled. To enable, run Envoy with flag --enable-mutex-tracing.']);
  });

  it('keeps its figures out of /stats and Prometheus', async () => {
    assert.ok(!(await admin('/stats')).body.includes('_contention'));
    assert.ok(!(await admin('/stats/prometheus')).body.includes('contention'));
  });
});
