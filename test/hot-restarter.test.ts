import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { repoRoot, tempDir } from './helpers/cli.js';
import { alive, childPids, httpRequest, waitFor } from './helpers/proxy.js';

/**
 * `proxy-hot-restarter` as an operator runs it: a start script, SIGHUP for each restart, SIGTERM
 * to stop. A new epoch that fails to start leaves the serving one alone; SIGHUPs during a restart
 * wait for it.
 */

const tmp = tempDir();
const failMark = join(tmp.dir, 'fail');
let restarterPid = 0;

after(() => {
  if (restarterPid && alive(restarterPid)) {
    for (const pid of childPids(restarterPid)) for (const grandchild of childPids(pid)) process.kill(grandchild, 'SIGKILL');
    for (const pid of childPids(restarterPid)) process.kill(pid, 'SIGKILL');
    process.kill(restarterPid, 'SIGKILL');
  }
  tmp.cleanup();
});

const config = {
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  static_resources: {
    listeners: [{
      name: 'ingress',
      address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
      filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
        '@type': HCM_TYPE, stat_prefix: 'ingress',
        route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'hi' } } }] }] },
        http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
      } }] }],
    }],
  },
};

/**
 * The start script's identity arguments, as an operator writes them: epoch 0 takes a free base id
 * and writes it down, later epochs read it back (so two test runs never share a family).
 */
function identity(name: string): string {
  const path = join(tmp.dir, `base-id-${name}`);
  return `$(if [ "$RESTART_EPOCH" = 0 ]; then echo "--use-dynamic-base-id --base-id-path ${path}"; else echo "--base-id $(cat ${path})"; fi)`;
}

/** The restarter, with its temporary files (the notify socket) inside this test's directory. */
function startRestarter(script: string, stdio: 'pipe' | 'ignore') {
  return spawn(process.execPath, [join(repoRoot, 'bin/proxy-hot-restarter.js'), script], { stdio: ['ignore', stdio, stdio], env: { ...process.env, TMPDIR: tmp.dir } });
}

async function ready(epoch: number): Promise<string> {
  const path = join(tmp.dir, `admin-${epoch}`);
  const admin = await waitFor(`epoch ${epoch}'s admin`, () => (existsSync(path) ? readFileSync(path, 'utf8') || undefined : undefined), 20_000);
  await waitFor(`epoch ${epoch} ready`, async () => ((await httpRequest(`http://${admin}/ready`)).status === 200 ? true : undefined));
  return admin;
}

describe('proxy-hot-restarter', () => {
  it('starts epochs on SIGHUP, survives a failed one, queues restarts, and stops everything on SIGTERM', async () => {
    const configPath = tmp.file('bootstrap.json', JSON.stringify(config));
    const script = tmp.file(
      'start.sh',
      `#!/bin/sh\nif [ -e '${failMark}' ]; then echo 'start.sh: refusing to start' >&2; exit 3; fi\n` +
        `exec '${process.execPath}' '${join(repoRoot, 'bin/proxy.js')}' -c '${configPath}' --restart-epoch "$RESTART_EPOCH" ${identity('main')} ` +
        `--admin-address-path '${tmp.dir}/admin-'"$RESTART_EPOCH" --concurrency 1 --drain-time-s 1 --parent-shutdown-time-s 1 -l warning\n`,
    );
    chmodSync(script, 0o755);
    const restarter = startRestarter(script, 'pipe');
    restarterPid = restarter.pid!;
    let output = '';
    restarter.stdout!.on('data', (d) => (output += d));
    restarter.stderr!.on('data', (d) => (output += d));
    const said = (text: string, times = 1) =>
      waitFor(`the restarter to say "${text}" ${times} time(s)`, () => (output.split(text).length - 1 >= times ? true : undefined), 20_000);

    const admin0 = await ready(0);
    const listener = (await httpRequest(`http://${admin0}/listeners`)).body;
    process.kill(restarterPid, 'SIGHUP');
    const admin1 = await ready(1);
    assert.equal((await httpRequest(`http://${admin1}/listeners`)).body, listener);
    await said('epoch 0');
    await said('exited with code=0');

    // A new epoch that fails to start leaves epoch 1 serving (Envoy's restarter would kill it).
    writeFileSync(failMark, '');
    process.kill(restarterPid, 'SIGHUP');
    await said('epoch 2');
    await said('failed to start (code 3); epoch 1 keeps serving');
    assert.equal((await httpRequest(`http://${admin1}/ready`)).status, 200);
    assert.equal((await httpRequest(`http://127.0.0.1:${/:(\d+)\n/.exec(listener)![1]}/`)).body, 'hi');

    // A SIGHUP while epoch 2 (the same number, retried) is starting waits for it. (Two signals sent
    // at once may merge into one, so the second goes once the first is handled.)
    rmSync(failMark);
    process.kill(restarterPid, 'SIGHUP');
    await said('starting epoch 2', 2);
    process.kill(restarterPid, 'SIGHUP');
    await said('is still starting; the restart waits for it');
    await ready(2);
    await ready(3);

    const exited = new Promise<number | null>((resolve) => restarter.once('exit', resolve));
    const epochs = childPids(restarterPid);
    process.kill(restarterPid, 'SIGTERM');
    assert.equal(await exited, 0, output);
    assert.match(output, /all epochs exited cleanly/);
    for (const pid of epochs) assert.ok(!alive(pid), `epoch pid ${pid} outlived the restarter`);
    restarterPid = 0;
  });

  it("the systemd unit's commands, in systemd's order: ExecStart, ExecReload (waits for the outcome), stop", async () => {
    // The unit and its start script as shipped; `proxy` and `proxy-hot-restarter` on PATH as `npm install -g` puts them.
    const unit = readFileSync(join(repoRoot, 'examples/systemd/proxy.service'), 'utf8');
    const exec = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)![1]!.split(' ');
    assert.deepEqual(exec('ExecStart'), ['/usr/bin/env', 'proxy-hot-restarter', '/usr/local/lib/proxy/proxy-start.sh']);
    assert.deepEqual(exec('ExecReload'), ['/usr/bin/env', 'proxy-hot-restarter', '--reload', '$MAINPID']);
    const bin = join(tmp.dir, 'bin');
    mkdirSync(bin);
    symlinkSync(join(repoRoot, 'bin/proxy'), join(bin, 'proxy'));
    symlinkSync(join(repoRoot, 'bin/proxy-hot-restarter.js'), join(bin, 'proxy-hot-restarter'));
    const runDir = join(tmp.dir, 'run');
    mkdirSync(runDir);
    const configPath = tmp.file('unit-bootstrap.json', JSON.stringify(config));
    const env = {
      ...process.env,
      PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH}`,
      TMPDIR: tmp.dir,
      // What systemd sets (RuntimeDirectory=proxy), and the script's settings for a test.
      RUNTIME_DIRECTORY: runDir,
      PROXY_CONFIG: configPath,
      PROXY_LOG_PATH: join(tmp.dir, 'unit.log'),
      PROXY_DRAIN_TIME_S: '1',
      PROXY_PARENT_SHUTDOWN_TIME_S: '1',
    };
    const [startCmd, ...startArgs] = exec('ExecStart');
    const main = spawn(startCmd!, startArgs.map((a) => (a.endsWith('proxy-start.sh') ? join(repoRoot, 'examples/systemd/proxy-start.sh') : a)), { stdio: ['ignore', 'pipe', 'pipe'], env });
    restarterPid = main.pid!;
    let output = '';
    main.stdout!.on('data', (d) => (output += d));
    main.stderr!.on('data', (d) => (output += d));
    await waitFor('epoch 0 serving', () => (/epoch 0 \(pid \d+\) is serving/.test(output) ? true : undefined), 20_000);
    assert.match(readFileSync(join(runDir, 'base-id'), 'utf8'), /^\d+$/, 'epoch 0 wrote the base id it picked');
    const reload = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const [cmd, ...args] = exec('ExecReload');
        const child = spawn(cmd!, args.map((a) => (a === '$MAINPID' ? String(main.pid) : a)), { stdio: ['ignore', 'pipe', 'pipe'], env });
        let out = '';
        child.stdout!.on('data', (d) => (out += d));
        child.stderr!.on('data', (d) => (out += d));
        child.once('exit', (code) => resolve({ code, out }));
      });

    // A reload whose epoch cannot start (its configuration is gone) fails, and says epoch 0 serves on.
    renameSync(configPath, `${configPath}.away`);
    const failed = await reload();
    assert.equal(failed.code, 1, failed.out);
    assert.match(failed.out, /^failed: epoch 1 failed to start \(code \d+\); epoch 0 keeps serving\n$/);
    renameSync(`${configPath}.away`, configPath);
    // Then one that works returns once epoch 1 serves, its pid named.
    const done = await reload();
    assert.equal(done.code, 0, done.out);
    const pid = Number(/^ready: epoch 1 \(pid (\d+)\) is serving\n$/.exec(done.out)![1]);
    assert.ok(alive(pid));
    assert.match(output, new RegExp(`epoch 1 \\(pid ${pid}\\) is serving`), 'the restarter said so before the reload returned');

    // systemctl stop, KillMode=mixed: SIGTERM to the main process, which stops the epochs.
    const exited = new Promise<number | null>((resolve) => main.once('exit', resolve));
    process.kill(main.pid!, 'SIGTERM');
    assert.equal(await exited, 0, output);
    assert.ok(!alive(pid));
    restarterPid = 0;
  });

  it('--reload names a restarter that is not there', async () => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin/proxy-hot-restarter.js'), '--reload', '999999999'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stderr!.on('data', (d) => (out += d));
    assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 1);
    assert.match(out, /^proxy-hot-restarter --reload: no restarter answers for pid 999999999 \(ECONNREFUSED\)\n$/);
  });

  it('its epochs stop when it is killed outright (as PR_SET_PDEATHSIG would)', async () => {
    const configPath = tmp.file('bootstrap-orphan.json', JSON.stringify(config));
    const script = tmp.file(
      'start-orphan.sh',
      `#!/bin/sh
exec '${process.execPath}' '${join(repoRoot, 'bin/proxy.js')}' -c '${configPath}' --restart-epoch "$RESTART_EPOCH" ${identity('orphan')} ` +
        `--admin-address-path '${tmp.dir}/admin-orphan' --concurrency 1 -l warning
`,
    );
    chmodSync(script, 0o755);
    const restarter = startRestarter(script, 'ignore');
    restarterPid = restarter.pid!;
    const adminPath = join(tmp.dir, 'admin-orphan');
    const admin = await waitFor('the epoch', () => (existsSync(adminPath) ? readFileSync(adminPath, 'utf8') || undefined : undefined), 20_000);
    await waitFor('ready', async () => ((await httpRequest(`http://${admin}/ready`)).status === 200 ? true : undefined));
    const [epochPid] = childPids(restarterPid);
    process.kill(restarterPid, 'SIGKILL');
    await waitFor('the orphaned epoch to stop', () => (!alive(epochPid!) ? true : undefined));
    restarterPid = 0;
  });
});
