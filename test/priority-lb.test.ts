import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { closedPort, startUpstream, type Upstream } from './helpers/upstream.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * Priority levels (failover as health drops, the overprovisioning factor), locality-weighted load
 * balancing and Endpoint.health_check_config, against real upstreams that answer with their name.
 */

let a: Upstream;
let b: Upstream;
let c: Upstream;
let d: Upstream;
const tmp = tempDir();

before(async () => {
  [a, b, c, d] = await Promise.all([startUpstream('A'), startUpstream('B'), startUpstream('C'), startUpstream('D')]);
});

after(async () => {
  await stopAllProxies();
  await Promise.all([a, b, c, d].map((u) => u.close()));
  tmp.cleanup();
});

interface Endpoint {
  port: number;
  status?: string;
  healthCheckPort?: number;
}

function endpoint(e: Endpoint): object {
  return {
    endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: e.port } }, ...(e.healthCheckPort ? { health_check_config: { port_value: e.healthCheckPort } } : {}) },
    ...(e.status ? { health_status: e.status } : {}),
  };
}

/** A proxy whose one route goes to cluster `web`, of these localities (each a priority, a weight and endpoints). */
function start(localities: { priority?: number; weight?: number; zone?: string; endpoints: Endpoint[] }[], cluster: object = {}, policy?: object): Promise<RunningProxy> {
  return startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [routesListener('front', [{ match: { prefix: '/' }, route: { cluster: 'web' } }])],
        clusters: [
          {
            name: 'web',
            type: 'STATIC',
            connect_timeout: '1s',
            ...cluster,
            load_assignment: {
              cluster_name: 'web',
              ...(policy ? { policy } : {}),
              endpoints: localities.map((l) => ({
                ...(l.priority ? { priority: l.priority } : {}),
                ...(l.weight ? { load_balancing_weight: l.weight } : {}),
                ...(l.zone ? { locality: { zone: l.zone } } : {}),
                lb_endpoints: l.endpoints.map(endpoint),
              })),
            },
          },
        ],
      },
    },
    ['--concurrency', '1'],
  );
}

/** Who answered `n` requests, counted by name. */
async function spread(proxy: RunningProxy, n: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const name = (await httpRequest(`http://127.0.0.1:${proxy.ports.get('front')}/`)).body;
    out[name] = (out[name] ?? 0) + 1;
  }
  return out;
}

describe('priority levels', () => {
  it('sends everything to priority 0 while it is healthy enough, everything to priority 1 when none of it is', async () => {
    // 3 of 4 healthy: 140 × 3/4 = 105, capped at 100: priority 0 takes all.
    const healthy = await start([
      { endpoints: [{ port: a.port }, { port: b.port, status: 'HEALTHY' }, { port: d.port }, { port: await closedPort(), status: 'UNHEALTHY' }] },
      { priority: 1, endpoints: [{ port: c.port }] },
    ]);
    const first = await spread(healthy, 40);
    assert.equal(first.C, undefined, JSON.stringify(first));
    const down = await start([{ endpoints: [{ port: a.port, status: 'UNHEALTHY' }, { port: b.port, status: 'UNHEALTHY' }] }, { priority: 1, endpoints: [{ port: c.port }] }]);
    assert.deepEqual(await spread(down, 20), { C: 20 });
    const clusters = (await httpRequest(`http://${down.admin}/clusters`)).body;
    assert.match(clusters, new RegExp(`^web::127\\.0\\.0\\.1:${c.port}::priority::1$`, 'm'));
  });

  it("spills the share priority 0's health leaves, after the overprovisioning factor", async () => {
    // Factor 100: one of two healthy is health 50, so about half goes to priority 1.
    const proxy = await start(
      [{ endpoints: [{ port: a.port }, { port: b.port, status: 'UNHEALTHY' }] }, { priority: 1, endpoints: [{ port: c.port }] }],
      {},
      { overprovisioning_factor: 100 },
    );
    const got = await spread(proxy, 300);
    assert.equal(got.B, undefined);
    assert.ok(got.A! > 100 && got.C! > 100, `about 150 each: ${JSON.stringify(got)}`);
  });
});

describe('locality-weighted load balancing', () => {
  it('splits a priority between its localities by load_balancing_weight', async () => {
    const proxy = await start(
      [
        { zone: 'one', weight: 1, endpoints: [{ port: a.port }] },
        { zone: 'three', weight: 3, endpoints: [{ port: b.port }] },
      ],
      { common_lb_config: { locality_weighted_lb_config: {} } },
    );
    assert.deepEqual(await spread(proxy, 40), { A: 10, B: 30 });
  });

  it('is refused with a consistent-hash policy, by name', async () => {
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('ring.json', JSON.stringify({
      static_resources: { clusters: [{ name: 'web', type: 'STATIC', lb_policy: 'RING_HASH', common_lb_config: { locality_weighted_lb_config: {} }, load_assignment: { cluster_name: 'web', endpoints: [] } }] },
    }))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /common_lb_config\.locality_weighted_lb_config: locality weights with RING_HASH are not supported by this proxy/);
  });
});

describe('Endpoint.health_check_config', () => {
  it("health-checks a host on the port it names, not the host's own", async () => {
    const refusing = await closedPort();
    const proxy = await start([{ endpoints: [{ port: a.port, healthCheckPort: refusing }, { port: b.port }] }], {
      health_checks: [{ timeout: '0.5s', interval: '0.1s', no_traffic_interval: '0.1s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} }],
    });
    await waitFor('host A failing its health check (on the other port)', async () => {
      const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
      return new RegExp(`^web::127\\.0\\.0\\.1:${a.port}::health_flags::/failed_active_hc$`, 'm').test(text) ? true : undefined;
    });
    const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
    assert.match(text, new RegExp(`^web::127\\.0\\.0\\.1:${b.port}::health_flags::healthy$`, 'm'));
    assert.deepEqual(await spread(proxy, 10), { B: 10 });
  });
});
