import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * Hot restart end to end, shaped like Envoy's own test (hot-restart.md §9): three epochs of one
 * base id, for an abstract and a file-system socket path. The generation counts 1 → 2 → 3; an
 * accumulating gauge (open connections) adds the parent's while it drains and drops it after;
 * listener addresses stay (port 0 and a Unix listener included); epoch 0 ends when epoch 2
 * starts, epoch 1 after its parent-shutdown time.
 */

const tmp = tempDir();
after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

function bootstrap(pipePath: string): object {
  const hcm = (prefix: string) => ({
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: prefix,
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'hello' } } }] }] },
      http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
    },
  });
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        { name: 'ingress', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm('ingress')] }] },
        { name: 'pipe', address: { pipe: { path: pipePath } }, filter_chains: [{ filters: [hcm('pipe')] }] },
      ],
    },
  };
}

const stat = statValue;

async function listeners(p: RunningProxy): Promise<string> {
  return (await httpRequest(`http://${p.admin}/listeners`)).body;
}

/** A keep-alive connection that made one request and now sits idle on whichever epoch accepted it. */
async function idleConnection(port: number): Promise<Agent> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await new Promise<void>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    }).on('error', reject).end();
  });
  return agent;
}

const exited = (p: RunningProxy) => new Promise<number | null>((resolve) => (p.process.exitCode !== null ? resolve(p.process.exitCode) : p.process.once('exit', (code) => resolve(code))));

for (const variant of ['abstract', 'file'] as const) {
  describe(`hot restart across three epochs (${variant} socket path)`, () => {
    it('hands the listeners over, counts generations, adds and drops the parent figures, and ends old epochs on time', async () => {
      const socketPath = variant === 'abstract' ? `@proxy_hot_restart_test_${process.pid}` : `${tmp.dir}/proxy_domain_socket`;
      const common = ['--socket-path', socketPath, ...(variant === 'file' ? ['--socket-mode', '644'] : []), '--concurrency', '1'];
      const config = bootstrap(`${tmp.dir}/${variant}.sock`);

      // Epoch 0 takes a free base id; the later epochs of the family name it.
      const e0 = await startProxy(config, [...common, '--parent-shutdown-time-s', '30']);
      const baseId = e0.baseId;
      const identity = ['--base-id', String(baseId), ...common];
      assert.equal(await stat(e0, 'server.hot_restart_generation'), 1);
      const version = (await runProxy(['--hot-restart-version', '--base-id', String(baseId)])).stderr;
      assert.equal((await httpRequest(`http://${e0.admin}/hot_restart_version`)).body, version);
      if (variant === 'file') assert.equal((statSync(`${socketPath}_parent_${baseId * 10}`).mode & 0o777).toString(8), '644');
      const addresses = await listeners(e0);
      const port = e0.ports.get('ingress')!;
      const onParent = await idleConnection(port);
      assert.equal(await stat(e0, 'http.ingress.downstream_cx_active'), 1);
      assert.equal(await stat(e0, 'http.ingress.downstream_rq_total'), 1);

      const e0Status = JSON.parse((await httpRequest(`http://${e0.admin}/hot_restart_status`)).body);
      assert.deepEqual(e0Status, { enabled: true, base_id: baseId, restart_epoch: 0, socket_path: socketPath, phase: 'live', parent: 'none' });
      const e1 = await startProxy(config, [...identity, '--restart-epoch', '1', '--parent-shutdown-time-s', '30']);
      assert.equal(await listeners(e1), addresses, 'the same addresses: port 0 kept its port, the Unix listener its path');
      const e1Status = JSON.parse((await httpRequest(`http://${e1.admin}/hot_restart_status`)).body);
      assert.deepEqual([e1Status.restart_epoch, e1Status.phase, e1Status.parent], [1, 'live', 'draining']);
      assert.ok(e1Status.parent_terminate_in_seconds > 0 && e1Status.parent_terminate_in_seconds <= 30, 'the deadline an operator can see');
      assert.equal(await stat(e1, 'server.hot_restart_generation'), 2);
      const onChild = await idleConnection(port);
      await waitFor('the parent connection counted in the child', async () => ((await stat(e1, 'http.ingress.downstream_cx_active')) === 2 ? true : undefined));
      assert.equal(await stat(e1, 'http.ingress.downstream_rq_total'), 2, "counters continue: the parent's request before the restart and the child's");

      // Measured from before epoch 2 starts its countdown, so a loaded machine can only make it longer.
      const started = Date.now();
      const e2 = await startProxy(config, [...identity, '--restart-epoch', '2', '--parent-shutdown-time-s', '2']);
      assert.equal(await exited(e0), 0, 'epoch 0 ends as soon as epoch 2 takes over');
      assert.equal(await exited(e1), 0);
      assert.ok(Date.now() - started >= 2000, 'epoch 1 ends after its parent-shutdown time');
      assert.equal(await stat(e2, 'server.hot_restart_generation'), 3);
      assert.equal(await listeners(e2), addresses);
      const onNewest = await idleConnection(port);
      await waitFor('the parent figures gone', async () => ((await stat(e2, 'http.ingress.downstream_cx_active')) === 1 ? true : undefined));
      assert.equal(await stat(e2, 'http.ingress.downstream_rq_total'), 3, 'counters continue across two restarts');
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'hello');
      for (const a of [onParent, onChild, onNewest]) a.destroy();
      assert.equal(await e2.stop(), 0);
      assert.ok(!existsSync(`/dev/shm/proxy_shared_memory_${baseId * 10}`), 'the last epoch of the family removes the region');
      if (variant === 'file') assert.deepEqual(readdirSync(tmp.dir).filter((f) => f.startsWith('proxy_domain_socket')), [], 'every epoch removed its socket files');
    });
  });
}

describe('a new epoch that fails after taking the admin interface', () => {
  it('leaves the old epoch serving, with its admin interface back and its figures kept', async () => {
    const { listenOnFreePort } = await import('./helpers/upstream.js');
    const held = await listenOnFreePort();
    try {
      const common = ['--socket-path', `@proxy_hot_restart_fail_${process.pid}`, '--concurrency', '1'];
      const config = bootstrap(`${tmp.dir}/fail.sock`) as any;
      const e0 = await startProxy(config, common);
      const identity = ['--base-id', String(e0.baseId), ...common];
      const port = e0.ports.get('ingress')!;
      for (let i = 0; i < 3; i++) await httpRequest(`http://127.0.0.1:${port}/`);
      assert.equal(await stat(e0, 'http.ingress.downstream_rq_total'), 3);

      // Epoch 1 adds a listener on a port someone else holds: it fails after shutdown_admin.
      const broken = structuredClone(config);
      broken.static_resources.listeners.push({ ...structuredClone(config.static_resources.listeners[0]), name: 'blocked', address: { socket_address: { address: '127.0.0.1', port_value: (held.address() as { port: number }).port } } });
      const e1 = await runProxy(['-c', tmp.file('broken.json', JSON.stringify(broken)), ...identity, '--restart-epoch', '1']);
      assert.equal(e1.code, 1);
      assert.match(e1.stderr, /shutting down admin|blocked|Address already in use/);

      const admin = await waitFor('the old epoch\'s admin interface back', async () => {
        const address = readFileSync(e0.adminAddressPath, 'utf8');
        const ready = await httpRequest(`http://${address}/ready`).catch(() => undefined);
        return ready?.status === 200 ? address : undefined;
      });
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'hello', 'it served throughout');
      const stats = (await httpRequest(`http://${admin}/stats?filter=^http\\.ingress\\.downstream_rq_total$`)).body;
      assert.equal(stats.trim(), 'http.ingress.downstream_rq_total: 4', 'counters kept while the admin interface was away');
      const status = JSON.parse((await httpRequest(`http://${admin}/hot_restart_status`)).body);
      assert.deepEqual([status.restart_epoch, status.phase], [0, 'live']);
      assert.match(e0.output(), /exited before taking over; starting the admin interface here again/);

      // The retried epoch 1 takes over as if nothing had happened, counters continuing.
      const e1b = await startProxy(config, [...identity, '--restart-epoch', '1', '--parent-shutdown-time-s', '1']);
      assert.equal(await stat(e1b, 'http.ingress.downstream_rq_total'), 4);
      assert.equal(await exited(e0), 0);
      assert.equal(await e1b.stop(), 0);
    } finally {
      held.close();
    }
  });
});

describe("a new epoch's configuration, read by its parent", () => {
  it('is what the new epoch would have read: a changed file serves its change, a broken one is refused with the same errors', async () => {
    const config = (answer: string) => {
      const d = bootstrap(`${tmp.dir}/read.sock`) as any;
      d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].direct_response.body.inline_string = answer;
      return d;
    };
    const common = ['--socket-path', `@proxy_config_read_test_${process.pid}`, '--concurrency', '1', '-l', 'info'];
    const e0 = await startProxy(config('zero'), common);
    const identity = ['--base-id', String(e0.baseId), ...common];
    const port = e0.ports.get('ingress')!;
    assert.doesNotMatch(e0.output(), /configuration: /, 'epoch 0 has no parent to ask');

    const e1 = await startProxy(config('one'), [...identity, '--restart-epoch', '1', '--parent-shutdown-time-s', '1']);
    assert.match(e1.output(), /configuration: read by the parent epoch/);
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'one');
    assert.equal(await exited(e0), 0);

    // A broken file: epoch 1 (whose own read was epoch 0's) reads it, and epoch 2 reports what a
    // validation of its own reports, then leaves epoch 1 serving.
    const broken = config('two');
    broken.static_resources.clusters = [{ name: 'c', type: 'STATIC', connect_timeout: 'soon' }];
    const brokenPath = tmp.file('broken-read.json', JSON.stringify(broken));
    const validated = await runProxy(['--mode', 'validate', '-c', brokenPath]);
    assert.equal(validated.code, 1);
    const errorLines = (out: string) => out.split('\n').filter((l) => l.includes('error initializing configuration')).map((l) => l.slice(l.indexOf('error initializing')));
    assert.ok(errorLines(validated.stderr).length > 0);
    const e2 = await runProxy(['-c', brokenPath, ...identity, '--restart-epoch', '2']);
    assert.equal(e2.code, 1);
    assert.match(e2.stderr, /configuration: read by the parent epoch/);
    assert.deepEqual(errorLines(e2.stderr), errorLines(validated.stderr));
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'one', 'epoch 1 serves on');

    // The retried epoch 2, with a good file, takes over.
    const e2b = await startProxy(config('one'), [...identity, '--restart-epoch', '2', '--parent-shutdown-time-s', '1']);
    assert.match(e2b.output(), /configuration: read by the parent epoch/);
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'one');
    assert.equal(await exited(e1), 0);
    assert.equal(await e2b.stop(), 0);
  });
});

describe('hot restart hand-over', () => {
  it('lets slow responses started on the old epoch finish there while new requests reach the new epoch', async () => {
    const { startUpstream } = await import('./helpers/upstream.js');
    const upstream = await startUpstream('A');
    try {
      const config = (answer: string) => {
        const d = bootstrap(`${tmp.dir}/handover.sock`) as any;
        const routes = d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes;
        routes.unshift(
          { match: { prefix: '/hold' }, route: { cluster: 'upstream', timeout: '60s' } },
          { match: { path: '/who' }, direct_response: { status: 200, body: { inline_string: answer } } },
        );
        d.static_resources.clusters = [{
          name: 'upstream', type: 'STATIC', connect_timeout: '1s',
          load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstream.port } } } }] }] },
        }];
        return d;
      };
      const common = ['--socket-path', `@proxy_handover_test_${process.pid}`, '--concurrency', '1'];
      const e0 = await startProxy(config('old epoch'), common);
      const port = e0.ports.get('ingress')!;
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/who`)).body, 'old epoch');
      // Five responses the upstream holds until the new epoch serves: they outlive the switch.
      const slow = Array.from({ length: 5 }, () => httpRequest(`http://127.0.0.1:${port}/hold?key=handover`));
      await waitFor('the five requests in the old epoch\'s hands', () => (upstream.held('handover') === 5 ? true : undefined));
      const e1 = await startProxy(config('new epoch'), ['--base-id', String(e0.baseId), ...common, '--restart-epoch', '1', '--parent-shutdown-time-s', '6']);
      for (let i = 0; i < 10; i++) assert.equal((await httpRequest(`http://127.0.0.1:${port}/who`)).body, 'new epoch');
      assert.equal(upstream.held('handover'), 5, 'still in flight after the switch');
      upstream.release('handover');
      const results = await Promise.all(slow);
      for (const r of results) assert.deepEqual([r.status, r.body], [200, 'A held']);
      assert.equal(e0.process.exitCode, null, 'the old epoch is still draining');
      assert.equal(await exited(e0), 0);
      assert.equal(await e1.stop(), 0);
    } finally {
      await upstream.close();
    }
  });
});

describe('/hot_restart_status', () => {
  it('says hot restart is off with --disable-hot-restart', async () => {
    const p = await startProxy(bootstrap(`${tmp.dir}/disabled.sock`), ['--disable-hot-restart', '--concurrency', '1']);
    assert.equal((await httpRequest(`http://${p.admin}/hot_restart_status`)).body, '{\n "enabled": false\n}\n');
    assert.equal((await httpRequest(`http://${p.admin}/hot_restart_version`)).body, 'disabled');
    await p.stop();
  });

  it('says why the server drains: failed health checks, then /drain_listeners', async () => {
    const p = await startProxy(bootstrap(`${tmp.dir}/reasons.sock`), ['--concurrency', '1']);
    const reasons = async () => JSON.parse((await httpRequest(`http://${p.admin}/hot_restart_status`)).body).drain_reasons;
    assert.equal(await reasons(), undefined, 'not draining');
    await httpRequest(`http://${p.admin}/healthcheck/fail`, { method: 'POST' });
    assert.deepEqual(await reasons(), ['healthcheck_fail']);
    await httpRequest(`http://${p.admin}/drain_listeners?graceful&skip_exit`, { method: 'POST' });
    await waitFor('both reasons', async () => ((await reasons())?.length === 2 ? true : undefined));
    assert.deepEqual(await reasons(), ['healthcheck_fail', 'drain_listeners']);
    await httpRequest(`http://${p.admin}/healthcheck/ok`, { method: 'POST' });
    assert.deepEqual(await reasons(), ['drain_listeners'], 'a drain is not undone');
    await p.stop();
  });
});
