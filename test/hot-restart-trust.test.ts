import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { epochSockets } from '../supervisor/hot-restart/naming.js';
import { encodeMessage, type WireMessage } from '../supervisor/hot-restart/framing.js';
import { nextMessageId, seal } from '../supervisor/hot-restart/seal.js';
import { routesListener } from './helpers/bootstraps.js';
import { repoRoot } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, withDeadline } from './helpers/proxy.js';

/**
 * Issue 13's attack, kept: a process of another local user (nobody) against a proxy that root
 * runs. Envoy's abstract hot-restart socket takes anything from anyone; here the other user
 * gets no listening socket, cannot drain or stop the epoch, and cannot jam its next restart.
 */

after(() => stopAllProxies());

const NOBODY = 65534;
const runsAsRoot = process.getuid?.() === 0;

function bootstrap(): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [routesListener('ingress', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'served' } } }])] },
  };
}

/** Runs the hostile probe as nobody; resolves once it has sent everything, with a way to read its report. */
async function hostileProbe(plan: { region: string; listenOn: string; target: string; datagrams: Buffer[] }) {
  const addon = openSync(join(repoRoot, 'build', 'native.node'), 'r');
  const code = readFileSync(join(repoRoot, 'test', 'fixtures', 'hostile-local-user.cjs'), 'utf8');
  const child = spawn(process.execPath, ['-e', code], {
    uid: NOBODY,
    gid: NOBODY,
    cwd: '/',
    env: { PATH: process.env.PATH },
    stdio: ['pipe', 'pipe', 'pipe', addon],
  });
  closeSync(addon);
  child.stdin!.write(`${JSON.stringify({ ...plan, datagrams: plan.datagrams.map((d) => d.toString('hex')) })}\n`);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await waitFor('the probe to send everything', () => {
    if (child.exitCode !== null) throw new Error(`the probe exited (${child.exitCode}): ${err}`);
    return /^sent \d+$/m.test(out) ? true : undefined;
  });
  return {
    sent: Number(/^sent (\d+)$/m.exec(out)![1]),
    async report(): Promise<{ uid: number; region: string; received: number; descriptors: number }> {
      child.stdin!.end();
      assert.equal(await withDeadline('the probe to exit', exited), 0, err);
      return JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!);
    },
  };
}

describe('the hot-restart channel against another local user', { skip: runsAsRoot ? false : 'needs root, to run the probe as nobody against a root-run proxy' }, () => {
  it('gives nobody no socket, no drain, no stop, and no way to break the next restart; the refusals are counted', async () => {
    const socketPath = `@proxy_trust_test_${process.pid}`;
    const common = ['--socket-path', socketPath, '--concurrency', '1'];
    const e0 = await startProxy(bootstrap(), common);
    const port = e0.ports.get('ingress')!;
    const names = epochSockets(socketPath, e0.baseId, 1);
    const address = `tcp://127.0.0.1:${port}`;
    const guess = randomBytes(32);
    const asRequest = (m: WireMessage) => encodeMessage(m)[0]!;
    const guessed = (m: WireMessage) => seal(guess, names.parentOfPrevious!, nextMessageId(), 1, true, asRequest(m));
    const declares1MiB = Buffer.alloc(18);
    declares1MiB.writeBigUInt64BE(1n << 20n, 0);
    const datagrams = [
      asRequest({ request: { pass_listen_socket: { address } } }), // as Envoy frames it
      guessed({ request: { pass_listen_socket: { address } } }),
      asRequest({ request: { shutdown_admin: {} } }),
      asRequest({ request: { drain_listeners: {} } }),
      guessed({ request: { drain_listeners: {} } }),
      asRequest({ request: { terminate: {} } }),
      guessed({ request: { terminate: {} } }),
      declares1MiB,
      ...Array.from({ length: 100 }, (_, i) => randomBytes(1 + ((i * 41) % 4000))),
    ];
    const region = `/dev/shm/proxy_shared_memory_${e0.baseId * 10}`;
    // The probe waits where epoch 1's replies would go: any answer would reach it.
    const probe = await hostileProbe({ region, listenOn: names.ownChild, target: names.parentOfPrevious!, datagrams });
    assert.equal(probe.sent, datagrams.length);
    await waitFor('every datagram refused and counted', async () => ((await statValue(e0, 'server.hot_restart_refused_datagrams')) === datagrams.length ? true : undefined));
    const report = await probe.report();
    assert.deepEqual(report, { uid: NOBODY, region: 'EACCES', received: 0, descriptors: 0 }, 'nobody reads the secret, gets no reply and no socket');

    assert.equal(e0.process.exitCode, null, 'not terminated');
    assert.equal((await httpRequest(`http://${e0.admin}/ready`)).status, 200, 'not draining');
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'served');
    const warnings = e0.output().split('\n').filter((l) => l.includes('hot restart: refused'));
    assert.ok(warnings.length >= 1 && warnings.length <= 2, `rate-limited: ${warnings.length} lines for ${datagrams.length} refusals`);
    assert.match(warnings[0]!, /refused a datagram from a process running as uid 65534 on @proxy_trust_test_\d+_parent_\d+ \(sender uid 65534, pid \d+\)/);
    assert.equal(await statValue(e0, 'server.hot_restart_dropped_datagrams'), 0);

    // The next real restart, right after the burst, takes the same socket and serves.
    const e1 = await startProxy(bootstrap(), ['--base-id', String(e0.baseId), ...common, '--restart-epoch', '1', '--parent-shutdown-time-s', '1']);
    assert.equal(e1.ports.get('ingress'), port);
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'served');
    assert.equal(await withDeadline('epoch 0 to exit', new Promise((resolve) => (e0.process.exitCode !== null ? resolve(e0.process.exitCode) : e0.process.once('exit', resolve)))), 0);
    assert.ok((await statValue(e1, 'server.hot_restart_refused_datagrams')) >= datagrams.length, "the parent's refusals carry over, as counters do");
    assert.equal(await e1.stop(), 0);
  });
});
