import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';

/**
 * Listener.freebind and Listener.socket_options, set on the listening socket as Envoy sets them
 * (setsockopt before bind, after bind, or once listening), seen from outside: a bind to an
 * address this host does not have, and a socket option the kernel reports on an accepted
 * connection.
 */

const tmp = tempDir();
/** TEST-NET-1 (RFC 5737): never an address of this host. */
const ABSENT = '192.0.2.1';

after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

function bootstrap(listener: Record<string, unknown>): Record<string, unknown> {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [listener], clusters: [] },
  };
}

const direct = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'here' } } }];

describe('Listener.freebind', () => {
  it('binds an address the host does not have with freebind, and refuses it without, naming the listener', async () => {
    const free = routesListener('free', direct);
    (free.address as any).socket_address.address = ABSENT;
    const proxy = await startProxy(bootstrap({ ...free, freebind: true }), ['--concurrency', '1']);
    const listeners = (await httpRequest(`http://${proxy.admin}/listeners`)).body;
    assert.match(listeners, new RegExp(`^free::${ABSENT.replace(/\./g, '\\.')}:\\d+$`, 'm'));
    await proxy.stop();

    const out = await runProxy(['--use-dynamic-base-id', '-c', tmp.file('no-freebind.json', JSON.stringify(bootstrap(free)))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /cannot bind '192\.0\.2\.1:0' for listener 'free': bind failed: Cannot assign requested address/);
  });
});

describe('Listener.socket_options', () => {
  let port = 0;
  before(async () => {
    // SO_KEEPALIVE (SOL_SOCKET 1, name 9) once listening: Linux copies it to every accepted connection.
    const options = [{ description: 'keepalive', level: 1, name: 9, int_value: 1, state: 'STATE_LISTENING' }];
    const proxy = await startProxy(bootstrap({ ...routesListener('opts', direct), socket_options: options }), ['--concurrency', '1']);
    port = proxy.ports.get('opts')!;
  });

  it('sets each option on the listening socket: an accepted connection carries SO_KEEPALIVE', async () => {
    const client = connect(port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    try {
      const local = client.localPort;
      // ss -o shows a keepalive timer only on a socket with SO_KEEPALIVE set: here, the proxy's end.
      const timer = await waitFor('the accepted connection in ss', () => {
        const out = spawnSync('ss', ['-tnoH', 'state', 'established', `( sport = :${port} and dport = :${local} )`], { encoding: 'utf8' }).stdout;
        return out.trim() ? out : undefined;
      });
      assert.match(timer, /timer:\(keepalive,/);
    } finally {
      client.destroy();
    }
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/`)).body, 'here');
  });

  it("refuses to start when the kernel refuses an option, naming the listener and the option", async () => {
    const options = [{ level: 1, name: 9999, int_value: 1 }];
    const out = await runProxy(['--use-dynamic-base-id', '-c', tmp.file('bad-option.json', JSON.stringify(bootstrap({ ...routesListener('bad', direct), socket_options: options })))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /cannot bind '127\.0\.0\.1:0' for listener 'bad': setsockopt\(level 1, name 9999\) failed: Protocol not available/);
  });
});
