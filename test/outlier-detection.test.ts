import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { httpListener, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { closedPort } from './helpers/upstream.js';

/**
 * Outlier detection end to end: real upstreams that answer 503 on purpose, ejection by
 * consecutive 5xx and by success rate, return after the ejection time, the ejection cap, and
 * what /clusters and the stats show. The detector is the supervisor's, fed by both workers.
 */

interface Fixed {
  name: string;
  port: number;
  status: number;
  server: Server;
}

function fixed(name: string, status: number): Promise<Fixed> {
  const f = { name, status } as Fixed;
  f.server = createServer((req, res) => {
    req.resume();
    res.writeHead(f.status).end(name);
  });
  return new Promise((resolve) => f.server.listen(0, '127.0.0.1', () => resolve(Object.assign(f, { port: (f.server.address() as { port: number }).port }))));
}

let good: Fixed;
let good2: Fixed;
let bad: Fixed;
let lonely: Fixed;
let proxy: RunningProxy;
/** Ports where nothing listens: every connect to them fails (a local-origin failure). */
let closed: number;
let closed2: number;

function cluster(name: string, hosts: Fixed[], outlier: object): object {
  return { ...staticCluster(name, hosts.map((h) => h.port)), outlier_detection: outlier };
}

before(async () => {
  good = await fixed('good', 200);
  good2 = await fixed('good2', 200);
  bad = await fixed('bad', 503);
  lonely = await fixed('lonely', 500);
  closed = await closedPort();
  closed2 = await closedPort();
  const names = ['consecutive', 'rate', 'capped', 'single', 'split', 'unsplit', 'splitrate'];
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: names.map((n) => httpListener(n, 0, n)),
        clusters: [
          cluster('consecutive', [good, bad], { consecutive_5xx: 3, interval: '0.2s', base_ejection_time: '1s', max_ejection_percent: 50 }),
          cluster('rate', [good, good2, bad], {
            consecutive_5xx: 100000, interval: '1s', base_ejection_time: '30s', max_ejection_percent: 50,
            success_rate_minimum_hosts: 3, success_rate_request_volume: 10, success_rate_stdev_factor: 1000,
          }),
          cluster('capped', [good, bad], { consecutive_5xx: 3, interval: '0.2s' }),
          cluster('single', [lonely], { consecutive_5xx: 4, interval: '10s', max_ejection_percent: 100 }),
          // split_external_local_origin_errors: connect failures are local-origin failures, not 5xx.
          { ...staticCluster('split', [good.port, closed]), outlier_detection: { split_external_local_origin_errors: true, consecutive_local_origin_failure: 3, consecutive_5xx: 3, interval: '0.2s', base_ejection_time: '30s', max_ejection_percent: 50 } },
          { ...staticCluster('unsplit', [good.port, closed2]), outlier_detection: { consecutive_5xx: 3, interval: '0.2s', base_ejection_time: '30s', max_ejection_percent: 50 } },
          cluster('splitrate', [good, good2, bad], {
            split_external_local_origin_errors: true, consecutive_5xx: 100000, interval: '0.5s', base_ejection_time: '30s', max_ejection_percent: 50,
            success_rate_minimum_hosts: 3, success_rate_request_volume: 10, success_rate_stdev_factor: 1000,
          }),
        ],
      },
    },
    ['--concurrency', '2'],
  );
});

after(async () => {
  await stopAllProxies();
  for (const f of [good, good2, bad, lonely]) f.server.close();
});

const clusters = async () => (await httpRequest(`http://${proxy.admin}/clusters`)).body;
const line = (text: string, key: string) => new RegExp(`^${key.replace(/[.[\]]/g, '\\$&')}::(.*)$`, 'm').exec(text)?.[1];
const stat = (name: string) => statValue(proxy, name);

async function send(listener: string, n: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get(listener)}/`, { agent: false });
    seen.set(r.body, (seen.get(r.body) ?? 0) + 1);
  }
  return seen;
}

describe('outlier detection', () => {
  it('ejects a host after consecutive 5xx across the tree, routes around it, and lets it back after the ejection time', async () => {
    await send('consecutive', 12);
    await waitFor('the ejection', async () => (line(await clusters(), `consecutive::127.0.0.1:${bad.port}::health_flags`) === '/failed_outlier_check' ? true : undefined));
    assert.deepEqual([...(await send('consecutive', 10))], [['good', 10]]);
    assert.equal(await stat('cluster.consecutive.outlier_detection.ejections_active'), 1);
    assert.ok((await stat('cluster.consecutive.outlier_detection.ejections_enforced_consecutive_5xx')) >= 1);
    assert.ok((await stat('cluster.consecutive.outlier_detection.ejections_detected_consecutive_5xx')) >= 1);
    const json = JSON.parse((await httpRequest(`http://${proxy.admin}/clusters?format=json`)).body);
    const host = json.cluster_statuses.find((c: { name: string }) => c.name === 'consecutive').host_statuses.find((h: { address: { socket_address: { port_value: number } } }) => h.address.socket_address.port_value === bad.port);
    assert.deepEqual(host.health_status, { failed_outlier_check: true, eds_health_status: 'HEALTHY' });
    // base_ejection_time 1 s, checked every 0.2 s.
    await waitFor('the return', async () => (line(await clusters(), `consecutive::127.0.0.1:${bad.port}::health_flags`) === 'healthy' ? true : undefined));
    assert.equal(await stat('cluster.consecutive.outlier_detection.ejections_active'), 0);
  });

  it('ejects exactly at the consecutive_5xx count, whichever worker saw each failure', async () => {
    await send('single', 3);
    // A pause that proves an absence: two detection intervals (0.2 s) pass without an ejection.
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(line(await clusters(), `single::127.0.0.1:${lonely.port}::health_flags`), 'healthy');
    await send('single', 1);
    await waitFor('the 4th failure to eject', async () => (line(await clusters(), `single::127.0.0.1:${lonely.port}::health_flags`) === '/failed_outlier_check' ? true : undefined));
  });

  it('ejects by success rate, and /clusters shows the average, the threshold and each host\'s rate', async () => {
    let snapshot = '';
    await waitFor('a success-rate ejection', async () => {
      await send('rate', 45);
      snapshot = await clusters();
      return line(snapshot, `rate::127.0.0.1:${bad.port}::health_flags`) === '/failed_outlier_check' ? true : undefined;
    }, 15_000);
    assert.ok((await stat('cluster.rate.outlier_detection.ejections_enforced_success_rate')) >= 1);
    // Two hosts at 100 %, one at 0 %: mean 66.7, stdev 47.1, threshold (factor 1.0) 19.5.
    const average = Number(line(snapshot, 'rate::outlier::success_rate_average'));
    const threshold = Number(line(snapshot, 'rate::outlier::success_rate_ejection_threshold'));
    assert.ok(Math.abs(average - 200 / 3) < 0.01, `average ${average}`);
    assert.ok(Math.abs(threshold - (200 / 3 - Math.sqrt(20000 / 9))) < 0.01, `threshold ${threshold}`);
    assert.equal(line(snapshot, `rate::127.0.0.1:${good.port}::success_rate`), '100');
    assert.equal(line(snapshot, `rate::127.0.0.1:${bad.port}::success_rate`), '0');
    assert.equal(line(snapshot, 'rate::outlier::local_origin_success_rate_average'), '-1');
  });

  it('never ejects beyond max_ejection_percent (10 % by default: none of 2 hosts), counting the overflow', async () => {
    await send('capped', 12);
    await waitFor('the overflow', async () => ((await stat('cluster.capped.outlier_detection.ejections_overflow')) >= 1 ? true : undefined));
    assert.equal(line(await clusters(), `capped::127.0.0.1:${bad.port}::health_flags`), 'healthy');
    assert.equal(line(await clusters(), 'capped::outlier::success_rate_average'), '-1', 'too little data: -1');
  });

  it('split_external_local_origin_errors: connect failures eject by consecutive_local_origin_failure, never as 5xx', async () => {
    const ejected = (c: string, port: number) => async () => (line(await clusters(), `${c}::127.0.0.1:${port}::health_flags`) === '/failed_outlier_check' ? true : undefined);
    await send('split', 8);
    await waitFor('the local-origin ejection', ejected('split', closed));
    assert.equal(await stat('cluster.split.outlier_detection.ejections_detected_consecutive_local_origin_failure'), 1);
    assert.equal(await stat('cluster.split.outlier_detection.ejections_enforced_consecutive_local_origin_failure'), 1);
    assert.equal(await stat('cluster.split.outlier_detection.ejections_detected_consecutive_5xx'), 0);
    assert.equal(await stat('cluster.split.outlier_detection.ejections_detected_consecutive_gateway_failure'), 0);
    // Without the split the same failures are 503s: consecutive_5xx ejects.
    await send('unsplit', 8);
    await waitFor('the 5xx ejection', ejected('unsplit', closed2));
    assert.equal(await stat('cluster.unsplit.outlier_detection.ejections_enforced_consecutive_5xx'), 1);
    assert.equal(await stat('cluster.unsplit.outlier_detection.ejections_detected_consecutive_local_origin_failure'), 0);
  });

  it('split: responses make the external success rate, connections the local-origin one, both in /clusters', async () => {
    let snapshot = '';
    await waitFor('a success-rate ejection with both monitors reported', async () => {
      await send('splitrate', 45);
      snapshot = await clusters();
      return line(snapshot, `splitrate::127.0.0.1:${bad.port}::health_flags`) === '/failed_outlier_check' && line(snapshot, 'splitrate::outlier::local_origin_success_rate_average') === '100' ? true : undefined;
    }, 15_000);
    // The 503s are the upstream's answers: external; every request had its connection: local 100 %.
    assert.ok((await stat('cluster.splitrate.outlier_detection.ejections_enforced_success_rate')) >= 1);
    assert.equal(await stat('cluster.splitrate.outlier_detection.ejections_detected_local_origin_success_rate'), 0);
    assert.equal(line(snapshot, 'splitrate::outlier::local_origin_success_rate_ejection_threshold'), '100');
    assert.equal(line(snapshot, `splitrate::127.0.0.1:${good.port}::local_origin_success_rate`), '100');
    const json = JSON.parse((await httpRequest(`http://${proxy.admin}/clusters?format=json`)).body);
    const status = json.cluster_statuses.find((c: { name: string }) => c.name === 'splitrate');
    assert.deepEqual(status.local_origin_success_rate_ejection_threshold, { value: 100 });
    const host = status.host_statuses.find((h: { address: { socket_address: { port_value: number } } }) => h.address.socket_address.port_value === good.port);
    assert.deepEqual(host.local_origin_success_rate, { value: 100 });
  });
});
