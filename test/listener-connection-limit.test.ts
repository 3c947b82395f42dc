import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';

/**
 * The runtime's `envoy.resource_limits.listener.<name>.connection_limit`: a listener's open
 * connections, counted across every worker, at most that many; one more is closed as it is
 * accepted and counted in `listener.<address>.downstream_cx_overflow`, as Envoy's listener does.
 */

const KEY = 'envoy.resource_limits.listener.web.connection_limit';
let proxy: RunningProxy;
const open: Socket[] = [];

before(async () => {
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      layered_runtime: { layers: [{ name: 'static', static_layer: { [KEY]: 2 } }, { name: 'admin', admin_layer: {} }] },
      static_resources: { listeners: [routesListener('web', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }])], clusters: [] },
    },
    // Two workers: the limit holds for the listener as a whole, not per worker.
    ['--concurrency', '2'],
  );
});

after(async () => {
  for (const s of open) s.destroy();
  await stopAllProxies();
});

/** A kept-alive connection that has had one answer (so a worker holds it), or undefined when the proxy closed it unanswered. */
async function served(): Promise<Socket | undefined> {
  const socket = connect(proxy.ports.get('web')!, '127.0.0.1');
  socket.on('error', () => {});
  return withDeadline('an answer or a close', new Promise<Socket | undefined>((resolve) => {
    let answer = '';
    socket.on('data', (d: Buffer) => {
      answer += d;
      if (answer.endsWith('ok')) {
        open.push(socket);
        resolve(socket);
      }
    });
    socket.once('close', () => resolve(undefined));
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  }));
}

const overflow = () => statValue(proxy, `listener.127.0.0.1_${proxy.ports.get('web')}.downstream_cx_overflow`);

describe('a listener connection limit from the runtime', () => {
  it('closes the connection past the limit at once, whichever worker accepts it', async () => {
    assert.ok(await served());
    assert.ok(await served());
    assert.equal(await served(), undefined, 'the third is closed unanswered');
    assert.equal(await overflow(), 1);
  });

  it('takes a connection again once one has closed', async () => {
    open.shift()!.destroy();
    await waitFor('a connection to be taken again', async () => (await served()) ?? undefined);
  });

  it('follows the runtime: a higher limit takes more', async () => {
    assert.ok((await overflow()) >= 1);
    assert.equal((await httpRequest(`http://${proxy.admin}/runtime_modify?${KEY}=3`, { method: 'POST' })).status, 200);
    await waitFor('a third connection under the new limit', async () => (await served()) ?? undefined);
    assert.equal(open.filter((s) => !s.destroyed).length, 3);
  });
});
