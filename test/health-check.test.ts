import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap, httpListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { tcpSocketOwner } from './helpers/sockets.js';
import { closedPort, startEcho } from './helpers/upstream.js';

/**
 * Active health checks end to end: real upstreams whose /healthz answers what the test says,
 * one that stops listening, and TCP checks with payloads. One checker for the tree (the
 * supervisor's), so with 2 workers each host still sees one check per interval.
 */

interface Backend {
  name: string;
  port: number;
  health: number;
  checks: IncomingHttpHeaders[];
  /** The proxy's processes the checks came from (resolved while each check's connection is open). */
  checkers: Set<number | undefined>;
  /** The same for proxied requests. */
  forwarders: Set<number | undefined>;
  server: Server;
}

function backend(name: string, health: number): Promise<Backend> {
  const b = { name, health, checks: [], checkers: new Set(), forwarders: new Set() } as unknown as Backend;
  b.server = createServer((req, res) => {
    if (req.url === '/healthz') {
      b.checks.push(req.headers);
      if (proxy) b.checkers.add(tcpSocketOwner(req.socket.remotePort!, req.socket.localPort!, [proxy.pid, ...proxy.children()]));
      res.writeHead(b.health).end();
      return;
    }
    if (proxy) b.forwarders.add(tcpSocketOwner(req.socket.remotePort!, req.socket.localPort!, [proxy.pid, ...proxy.children()]));
    res.end(name);
  });
  return new Promise((resolve) => b.server.listen(0, '127.0.0.1', () => resolve(Object.assign(b, { port: (b.server.address() as { port: number }).port }))));
}

let good: Backend;
let bad: Backend;
let proxy: RunningProxy;
let echoPort: number;
let refusing: number;
const closers: (() => void)[] = [];

// A generous timeout: a check that times out on a loaded machine would fail a host the test expects healthy.
const HC = { timeout: '5s', interval: '0.1s', no_traffic_interval: '0.1s', unhealthy_threshold: 2, healthy_threshold: 2 };

function cluster(name: string, ports: number[], hc: object): object {
  return { ...staticCluster(name, ports), health_checks: [{ ...HC, ...hc }] };
}

before(async () => {
  good = await backend('good', 200);
  bad = await backend('bad', 503);
  const echo = await startEcho();
  closers.push(() => echo.server.close(), () => good.server.close(), () => bad.server.close());
  echoPort = echo.port;
  refusing = await closedPort();
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [httpListener('web', 0, 'web')],
        clusters: [
          cluster('web', [good.port, bad.port], { http_health_check: { path: '/healthz', expected_statuses: [{ start: 200, end: 300 }] } }),
          cluster('tcp', [echoPort, refusing], { tcp_health_check: { send: { text: '70696e67' }, receive: [{ text: '70696e67' }] } }),
        ],
      },
    },
    ['--concurrency', '2'],
  );
});

after(async () => {
  await stopAllProxies();
  for (const close of closers) close();
});

const clusters = async () => (await httpRequest(`http://${proxy.admin}/clusters`)).body;
const flags = (text: string, cluster: string, port: number) => new RegExp(`^${cluster}::127\\.0\\.0\\.1:${port}::health_flags::(.*)$`, 'm').exec(text)?.[1];
const stat = (name: string) => statValue(proxy, name);

async function answers(n: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) seen.add((await httpRequest(`http://127.0.0.1:${proxy.ports.get('web')}/`)).body);
  return seen;
}

describe('active health checks', () => {
  it('takes a host failing its HTTP check out of rotation from the start, and /clusters says so', async () => {
    const text = await clusters();
    assert.equal(flags(text, 'web', good.port), 'healthy');
    assert.equal(flags(text, 'web', bad.port), '/failed_active_hc');
    assert.deepEqual([...(await answers(10))], ['good']);
    const check = good.checks[0]!;
    assert.equal(check['user-agent'], 'Envoy/HC');
    assert.equal(check.host, 'web', 'the Host header is the cluster name without http_health_check.host');
    assert.equal(await stat('cluster.web.health_check.healthy'), 1);
    assert.ok((await stat('cluster.web.health_check.failure')) > 0);
    assert.ok((await stat('cluster.web.health_check.success')) > 0);
    assert.equal(await stat('cluster.web.membership_healthy'), 1);
  });

  it('runs one checker for the tree, not one per worker', async () => {
    good.checkers.clear();
    const before = good.checks.length;
    await waitFor('ten more checks', () => (good.checks.length >= before + 10 ? true : undefined));
    // Checkers in the workers would show up as their pids; the tree's one checker is the supervisor.
    assert.deepEqual([...good.checkers], [proxy.pid]);
    // Whereas requests reach the host from the workers' pools.
    good.forwarders.clear();
    await answers(4);
    assert.ok(good.forwarders.size > 0 && [...good.forwarders].every((pid) => pid !== undefined && pid !== proxy.pid), `forwarded by ${[...good.forwarders]}`);
  });

  it('brings a host back after healthy_threshold passes, and takes one out after unhealthy_threshold failures', async () => {
    bad.health = 200;
    await waitFor('bad to pass its checks', async () => (flags(await clusters(), 'web', bad.port) === 'healthy' ? true : undefined));
    assert.deepEqual([...(await answers(10))].sort(), ['bad', 'good']);
    good.health = 500;
    await waitFor('good to fail its checks', async () => (flags(await clusters(), 'web', good.port) === '/failed_active_hc' ? true : undefined));
    assert.deepEqual([...(await answers(10))], ['bad']);
  });

  it('marks a host that stops listening as failing, counting network failures', async () => {
    const networkBefore = await stat('cluster.web.health_check.network_failure');
    good.health = 200;
    await new Promise<void>((resolve) => {
      bad.server.close(() => resolve());
      bad.server.closeAllConnections();
    });
    await waitFor('the closed host to fail', async () => (flags(await clusters(), 'web', bad.port) === '/failed_active_hc' ? true : undefined));
    assert.ok((await stat('cluster.web.health_check.network_failure')) > networkBefore);
    await waitFor('good back', async () => (flags(await clusters(), 'web', good.port) === 'healthy' ? true : undefined));
    assert.deepEqual([...(await answers(10))], ['good']);
  });

  it('checks TCP hosts with send and receive payloads', async () => {
    const text = await clusters();
    assert.equal(flags(text, 'tcp', echoPort), 'healthy');
    assert.equal(flags(text, 'tcp', refusing), '/failed_active_hc');
    const json = JSON.parse((await httpRequest(`http://${proxy.admin}/clusters?format=json`)).body);
    const hosts = json.cluster_statuses.find((c: { name: string }) => c.name === 'tcp').host_statuses;
    assert.deepEqual(hosts.map((h: { health_status: unknown }) => h.health_status), [{ eds_health_status: 'HEALTHY' }, { failed_active_health_check: true, eds_health_status: 'HEALTHY' }]);
  });
});

describe('health check configuration', () => {
  it('refuses what it does not implement, naming the field', async () => {
    const { runProxy, tempDir } = await import('./helpers/cli.js');
    const tmp = tempDir();
    try {
      const config = (checks: object[]) => {
        const c = cluster('c', [1], {}) as any;
        c.health_checks = checks;
        return tmp.file(`c${Math.random()}.json`, JSON.stringify({ static_resources: { clusters: [c] } }));
      };
      const grpc = await runProxy(['--mode', 'validate', '-c', config([{ ...HC, grpc_health_check: {} }])]);
      assert.equal(grpc.code, 1);
      assert.match(grpc.stderr, /health_checks\[0\]\.grpc_health_check: field 'grpc_health_check' .* not supported .*HTTP and TCP health checks are supported/);
      const two = await runProxy(['--mode', 'validate', '-c', config([{ ...HC, tcp_health_check: {} }, { ...HC, tcp_health_check: {} }])]);
      assert.match(two.stderr, /health_checks: one health check per cluster is supported, got 2/);
      const valid = await runProxy(['--mode', 'validate', '-c', config([{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} }])]);
      assert.equal(valid.code, 0, valid.stderr);
    } finally {
      tmp.cleanup();
    }
  });
});

describe('x-envoy-immediate-health-check-fail (passive failure)', () => {
  it("fails a host at once when one of its answers carries it, leaving it out of rotation and of the panic arithmetic", async () => {
    let draining = false;
    const seen: string[] = [];
    const upstream = (name: string) => {
      const server = createServer((req, res) => {
        if (req.url === '/healthz') return void res.end();
        seen.push(name);
        // An upstream Envoy whose health-check filter fails (it drains) says so on every answer.
        if (name === 'a' && draining) res.setHeader('x-envoy-immediate-health-check-fail', 'true');
        res.end(name);
      });
      closers.push(() => server.close());
      return new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    };
    const [a, b] = [await upstream('a'), await upstream('b')];
    // Checks far apart: only the first round runs during the test, so what changes is the passive failure's doing.
    const slow = { timeout: '5s', interval: '60s', no_traffic_interval: '60s', unhealthy_threshold: 3, healthy_threshold: 1, http_health_check: { path: '/healthz' } };
    const p = await startProxy(
      {
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: { listeners: [httpListener('web', 0, 'pair')], clusters: [{ ...staticCluster('pair', [a, b]), health_checks: [slow] }] },
      },
      ['--concurrency', '1'],
    );
    const text = async () => (await httpRequest(`http://${p.admin}/clusters`)).body;
    await waitFor('both hosts checked healthy', async () => {
      const t = await text();
      return flags(t, 'pair', a) === 'healthy' && flags(t, 'pair', b) === 'healthy' ? true : undefined;
    });
    draining = true;
    const url = `http://127.0.0.1:${p.ports.get('web')}/`;
    let answer;
    do answer = await httpRequest(url);
    while (answer.body !== 'a');
    assert.equal(answer.headers['x-envoy-immediate-health-check-fail'], 'true', 'passed on to the client, as Envoy does');
    await waitFor('a failed by its own answer', async () => (flags(await text(), 'pair', a) === '/failed_active_hc/excluded_via_immediate_hc_fail' ? true : undefined));
    assert.equal(flags(await text(), 'pair', b), 'healthy');
    assert.equal(await statValue(p, 'cluster.pair.health_check.passive_failure'), 1);
    assert.equal(await statValue(p, 'cluster.pair.health_check.failure'), 1, 'a passive failure is a failure');
    assert.equal(await statValue(p, 'cluster.pair.health_check.healthy'), 1);
    seen.length = 0;
    for (let i = 0; i < 6; i++) await httpRequest(url);
    assert.deepEqual([...new Set(seen)], ['b'], 'the failed host gets no more requests');
  });
});

describe('the health-check filter in the chain', () => {
  const HEALTH_CHECK = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';
  const LUA = 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua';
  const healthCheck = { name: 'envoy.filters.http.health_check', typed_config: { '@type': HEALTH_CHECK, pass_through_mode: false, headers: [{ name: ':path', string_match: { exact: '/healthz' } }] } };
  const lua = { name: 'envoy.filters.http.lua', typed_config: { '@type': LUA, default_source_code: { inline_string: 'function envoy_on_response(h) h:headers():add("x-seen-by", "lua") end' } } };
  const routes = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'routed' } } }];
  const proxies: RunningProxy[] = [];
  after(async () => {
    for (const p of proxies.splice(0)) await p.stop();
  });

  it('runs at its place in http_filters, as Envoy runs it: a filter before it sees health checks, and every filter sees their answers', async () => {
    const start = async (name: string, filters: object[]) => {
      const bootstrap = { ...filterBootstrap(name, filters, routes, 9), node: { id: 'hc', cluster: 'front' } };
      const p = await startProxy(bootstrap, ['--concurrency', '1']);
      proxies.push(p);
      return `http://127.0.0.1:${p.ports.get(name)}`;
    };
    const luaFirst = await start('lua-first', [lua, healthCheck]);
    const hcFirst = await start('hc-first', [healthCheck, lua]);
    const before = await httpRequest(`${luaFirst}/healthz`);
    assert.deepEqual([before.status, before.headers['x-seen-by'], before.headers['x-envoy-upstream-healthchecked-cluster']], [200, 'lua', 'front']);
    // Its answer goes back through the filters after it too, as Envoy's filter manager encodes a local reply from the chain's end.
    const afterIt = await httpRequest(`${hcFirst}/healthz`);
    assert.deepEqual([afterIt.status, afterIt.headers['x-seen-by'], afterIt.headers['x-envoy-upstream-healthchecked-cluster']], [200, 'lua', 'front']);
    // Every other request goes on through both.
    for (const base of [luaFirst, hcFirst]) {
      const r = await httpRequest(`${base}/other`);
      assert.deepEqual([r.body, r.headers['x-seen-by']], ['routed', 'lua']);
    }
  });
});
