import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { listenOnFreePort } from './helpers/upstream.js';
import { alive, httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';

after(stopAllProxies);
const tmp = tempDir();
after(() => tmp.cleanup());

function bootstrap(listenerPort = 0, adminPort = 0): object {
  return {
    node: { id: 'tree-test', cluster: 'tests' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: adminPort } } },
    static_resources: {
      listeners: [
        {
          name: 'http',
          address: { socket_address: { address: '127.0.0.1', port_value: listenerPort } },
          traffic_direction: 'INBOUND',
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': HCM_TYPE,
            stat_prefix: 'http',
            route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }] }] },
            http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
          } }] }],
        },
      ],
    },
  };
}

/** Child processes of `pid` with their role (the argument after the entry script). */
function roles(pid: number): Map<string, number> {
  const out = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  const map = new Map<string, number>();
  for (const line of out.trim().split('\n')) {
    const m = /^\s*(\d+)\s+.*\s(admin|worker_\d+)$/.exec(line);
    if (m) map.set(m[2]!, Number(m[1]));
  }
  return map;
}


describe('the process tree', () => {
  it('forks the admin process and --concurrency workers, and reports itself in /server_info', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '2', '--drain-time-s', '30', '--disable-extensions', 'envoy.filters.http/envoy.filters.http.cors']);
    assert.deepEqual([...roles(proxy.pid).keys()].sort(), ['admin', 'worker_0', 'worker_1']);
    const info = JSON.parse((await httpRequest(`http://${proxy.admin}/server_info`)).body);
    assert.equal(info.state, 'LIVE');
    assert.match(info.version, /^[0-9a-f]{40}\/\d+\.\d+\.\d+(-dev)?\/(Clean|Modified)\/RELEASE\/OpenSSL/);
    assert.equal(info.command_line_options.concurrency, 2);
    assert.equal(info.command_line_options.drain_time, '30s');
    assert.equal(info.command_line_options.base_id, '0');
    assert.equal(info.command_line_options.mode, 'Serve');
    assert.equal(info.node.id, 'tree-test');
    // node.extensions as Envoy lists them: each extension with its category and type URLs, the ones --disable-extensions names said so.
    type NodeExtension = { name: string; category: string; type_urls: string[]; disabled: boolean };
    const extension = (name: string) => (info.node.extensions as NodeExtension[]).find((e) => e.name === name);
    assert.deepEqual(extension('envoy.filters.http.cors'), {
      name: 'envoy.filters.http.cors',
      category: 'envoy.filters.http',
      type_urls: ['envoy.extensions.filters.http.cors.v3.Cors', 'envoy.extensions.filters.http.cors.v3.CorsPolicy'],
      disabled: true,
    });
    assert.equal(extension('envoy.filters.http.router')?.disabled, false);
    assert.equal(extension('envoy.compression.gzip.compressor')?.category, 'envoy.compression.compressor');
    assert.match(info.uptime_current_epoch, /^\d+s$/);
    assert.equal(info.hot_restart_version, (await runProxy(['--hot-restart-version'])).stderr);
    assert.equal(await proxy.stop(), 0);
  });

  it('exits 0 on SIGTERM and SIGINT, with every process gone', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const proxy = await startProxy(bootstrap(), ['--concurrency', '2']);
      const kids = proxy.children();
      assert.equal(kids.length, 3);
      assert.equal(await proxy.stop(signal), 0, `exit status after ${signal}; the proxy said:\n${proxy.output()}`);
      for (const k of kids) assert.ok(!alive(k), `child ${k} outlived its supervisor after ${signal}`);
    }
  });

  it('leaves no orphans when the supervisor is killed', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '2']);
    const kids = proxy.children();
    process.kill(proxy.pid, 'SIGKILL');
    await waitFor('the children to exit on their own', () => kids.every((k) => !alive(k)) || undefined);
    await proxy.stop();
  });

  it('exits cleanly on POST /quitquitquit, and refuses it as GET with 400', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1']);
    const get = await httpRequest(`http://${proxy.admin}/quitquitquit`);
    assert.deepEqual([get.status, get.body], [400, 'Method GET not allowed, POST required.']);
    assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).status, 200);
    const kids = proxy.children();
    const post = await httpRequest(`http://${proxy.admin}/quitquitquit`, { method: 'POST' });
    assert.deepEqual([post.status, post.body], [200, 'OK\n']);
    const code = await new Promise((resolve) => proxy.process.once('exit', resolve));
    assert.equal(code, 0);
    for (const k of kids) assert.ok(!alive(k));
    await proxy.stop();
  });

  it('replaces a SIGKILLed worker while new connections keep arriving, failing none of them', async (t) => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1']);
    const url = `http://127.0.0.1:${proxy.ports.get('http')}/`;
    const victim = roles(proxy.pid).get('worker_0')!;
    let deadAt = Infinity;
    let stop = false;
    const results: { startedAt: number; ok: boolean }[] = [];
    const loop = async () => {
      while (!stop) {
        const startedAt = Date.now();
        try {
          const r = await httpRequest(url);
          results.push({ startedAt, ok: r.status === 200 && r.body === 'ok' });
        } catch {
          results.push({ startedAt, ok: false });
        }
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    await waitFor('the client loops under way', () => (results.filter((r) => r.ok).length >= 20 ? true : undefined));
    process.kill(victim, 'SIGKILL');
    await waitFor('the worker to die', () => !alive(victim) || undefined);
    deadAt = Date.now();
    // While its replacement starts, the listener has an unready target (or it is already back).
    const initDump = JSON.parse((await httpRequest(`http://${proxy.admin}/init_dump`)).body);
    if (initDump.unready_targets_dumps) assert.deepEqual(initDump.unready_targets_dumps[0].target_names, ['target worker_0 serving listener http']);
    const replacement = await waitFor('a replacement worker_0', () => {
      const pid = roles(proxy.pid).get('worker_0');
      return pid !== undefined && pid !== victim ? pid : undefined;
    });
    await waitFor('requests served after the replacement', () => (results.filter((r) => r.startedAt >= deadAt && r.ok).length >= 20 ? true : undefined));
    stop = true;
    await Promise.all(loops);
    const after = results.filter((r) => r.startedAt >= deadAt);
    const before = results.filter((r) => r.startedAt < deadAt);
    t.diagnostic(`requests: ${before.length} before the worker died (${before.filter((r) => !r.ok).length} failed, in flight at the kill), ${after.length} after (${after.filter((r) => !r.ok).length} failed)`);
    assert.ok(after.length > 0, 'the client loop made no request after the worker died');
    assert.deepEqual(after.filter((r) => !r.ok).length, 0, `${after.filter((r) => !r.ok).length} of ${after.length} requests failed after the worker died`);
    assert.ok(alive(replacement));
    assert.match(proxy.output(), /worker_0 \(pid \d+\) exited unexpectedly \(signal SIGKILL\)/);
    assert.equal((await httpRequest(`http://${proxy.admin}/init_dump`)).body, '{}\n'); // all serving again
    assert.equal((await httpRequest(`http://${proxy.admin}/init_dump?mask=cluster`)).body, '{}\n');
    assert.equal(await proxy.stop(), 0);
  });

  it('replaces a SIGKILLed admin process on the same socket: a request sent meanwhile waits for it', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1']);
    const victim = roles(proxy.pid).get('admin')!;
    process.kill(victim, 'SIGKILL');
    await waitFor('the admin process to die', () => !alive(victim) || undefined);
    // The supervisor holds the admin address's socket: the connection queues until the replacement accepts it.
    const ready = await httpRequest(`http://${proxy.admin}/ready`);
    assert.deepEqual([ready.status, ready.body], [200, 'LIVE\n']);
    const replacement = roles(proxy.pid).get('admin');
    assert.ok(replacement !== undefined && replacement !== victim && alive(replacement));
    assert.match(proxy.output(), /admin \(pid \d+\) exited unexpectedly \(signal SIGKILL\)/);
    assert.equal(await proxy.stop(), 0);
  });

  it('reopens its log file on SIGUSR1 and ignores SIGHUP', async () => {
    const logPath = join(tmp.dir, 'proxy.log');
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1', '--log-path', logPath, '--file-flush-interval-msec', '50']);
    await waitFor('the first log lines', () => readFileSync(logPath, 'utf8').includes('LIVE') || undefined);
    process.kill(proxy.pid, 'SIGHUP');
    await waitFor('SIGHUP to be logged as ignored', () => readFileSync(logPath, 'utf8').includes('SIGHUP ignored') || undefined);
    renameSync(logPath, `${logPath}.1`);
    process.kill(proxy.pid, 'SIGUSR1');
    // A GET of a mutation logs an error in the admin process: once one lands in the new file, the
    // admin process has reopened too.
    await waitFor('a line in the reopened file', async () => {
      await httpRequest(`http://${proxy.admin}/quitquitquit`);
      try {
        return readFileSync(logPath, 'utf8').includes('mutates state') || undefined;
      } catch {
        return undefined;
      }
    });
    assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).status, 200, 'still serving after SIGHUP');
    await proxy.stop();
  });
});

describe('start-up failures', () => {
  it('an invalid bootstrap exits 1 before any socket is bound or any worker starts', async () => {
    // The listener's port is taken: a proxy that bound before validating would fail on that first.
    const blocker = await listenOnFreePort();
    const port = (blocker.address() as { port: number }).port;
    try {
      const doc = bootstrap(port) as any;
      doc.static_resources.clusters = [{ name: 'bad', type: 'ORIGINAL_DST', connect_timeout: '1s' }];
      const out = await runProxy(['--use-dynamic-base-id', '-c', tmp.file('bad.json', JSON.stringify(doc))]);
      assert.equal(out.code, 1);
      assert.match(out.stderr, /cluster type ORIGINAL_DST is not supported/);
      assert.doesNotMatch(out.stderr, /starting epoch|cannot bind/);
      // The workers forked while the configuration loaded (supervisor/spares.ts) go without a word.
      assert.doesNotMatch(out.stderr, /supervisor is gone/);
    } finally {
      blocker.close();
    }
  });

  it('a listener port in use exits 1 naming the listener and address', async () => {
    const blocker = await listenOnFreePort();
    const port = (blocker.address() as { port: number }).port;
    try {
      const out = await runProxy(['--use-dynamic-base-id', '-c', tmp.file('busy.json', JSON.stringify(bootstrap(port)))]);
      assert.equal(out.code, 1);
      assert.match(out.stderr, new RegExp(`cannot bind '127\\.0\\.0\\.1:${port}' for listener 'http': Address already in use`));
    } finally {
      blocker.close();
    }
  });

  it('an admin port in use exits 1 naming the address, before the workers are given their configuration', async () => {
    const blocker = await listenOnFreePort();
    const port = (blocker.address() as { port: number }).port;
    try {
      const out = await runProxy(['--use-dynamic-base-id', '-c', tmp.file('admin-busy.json', JSON.stringify(bootstrap(0, port))), '--concurrency', '1']);
      assert.equal(out.code, 1);
      assert.match(out.stderr, new RegExp(`cannot bind '127\\.0\\.0\\.1:${port}' for the admin interface: Address already in use`));
    } finally {
      blocker.close();
    }
  });
});

describe('the first admin endpoints', () => {
  it('/help lists what is served, unknown paths get 404 with it, and /ready says LIVE', async () => {
    const accessLog = join(tmp.dir, 'admin-access.log');
    const doc = bootstrap() as any;
    doc.admin.access_log_path = accessLog;
    const proxy = await startProxy(doc, ['--concurrency', '1']);
    const help = await httpRequest(`http://${proxy.admin}/help`);
    assert.match(help.body, /^admin commands are:\n/);
    for (const path of ['/ready', '/server_info', '/listeners', '/quitquitquit (POST)', '/help']) assert.ok(help.body.includes(`  ${path}:`), `/help lacks ${path}`);
    const missing = await httpRequest(`http://${proxy.admin}/nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body, `invalid path. ${help.body}`);
    const ready = await httpRequest(`http://${proxy.admin}/ready`);
    assert.deepEqual([ready.status, ready.body, ready.headers['content-type']], [200, 'LIVE\n', 'text/plain; charset=UTF-8']);
    const listeners = await httpRequest(`http://${proxy.admin}/listeners`);
    assert.equal(listeners.body, `http::127.0.0.1:${proxy.ports.get('http')}\n`);
    const home = await httpRequest(`http://${proxy.admin}/`);
    assert.match(home.body, /^<!DOCTYPE html>/);
    assert.match(home.body, /<form action='quitquitquit' method='post'/);
    // The access log is buffered (--file-flush-interval-msec); stopping flushes it, losing nothing.
    await proxy.stop();
    const log = readFileSync(accessLog, 'utf8');
    assert.match(log, /^\[\d{4}-\d\d-\d\dT[\d:.]+Z\] "GET \/help HTTP\/1\.1" 200 - 0 \d+ \d+ - "-" "-" "-" "127\.0\.0\.1:\d+" "-"$/m);
    assert.match(log, /"GET \/nope HTTP\/1\.1" 404 /);
    assert.doesNotMatch(proxy.output(), /reachable from other machines/, 'no warning on loopback');
  });

  it('records a request its client abandoned half-sent in one line, without a stack trace', async () => {
    const accessLog = join(tmp.dir, 'admin-abandoned.log');
    const doc = bootstrap() as any;
    doc.admin.access_log_path = accessLog;
    const proxy = await startProxy(doc, ['--concurrency', '1', '--file-flush-interval-msec', '50']);
    const [host, port] = [proxy.admin.slice(0, proxy.admin.lastIndexOf(':')), Number(proxy.admin.slice(proxy.admin.lastIndexOf(':') + 1))];
    const socket = tcpConnect(port, host);
    await new Promise((r) => socket.once('connect', r));
    // `100 Continue` says the admin has the request's headers and waits for its body.
    socket.write('POST /runtime_modify HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n');
    await new Promise((r) => socket.once('data', r));
    socket.write('half a bo');
    socket.destroy();
    await waitFor('the abandoned request in the access log', () => (existsSync(accessLog) && /"POST \/runtime_modify HTTP\/1\.1" 0 /.test(readFileSync(accessLog, 'utf8'))) || undefined);
    assert.doesNotMatch(proxy.output(), /runtime_modify failed|^\s+at /m);
    await proxy.stop();
  });

  it('warns when the admin interface listens beyond loopback', async () => {
    const doc = bootstrap() as any;
    doc.admin.address.socket_address.address = '0.0.0.0';
    const proxy = await startProxy(doc, ['--concurrency', '1']);
    assert.match(proxy.output(), /\[warning\]\[admin\] .*the admin interface listens on 0\.0\.0\.0:\d+, reachable from other machines: anyone who reaches it can drain, reconfigure or stop the proxy; bind it to 127\.0\.0\.1/);
    await proxy.stop();
  });
});


