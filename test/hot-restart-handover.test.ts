import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { HotRestartChannel } from '../supervisor/hot-restart/protocol.js';
import { ListenSockets, type InheritSocket } from '../supervisor/listen-sockets.js';
import { ListenerManager } from '../supervisor/listener-manager.js';
import { tempDir } from './helpers/cli.js';

const tmp = tempDir();
after(() => tmp.cleanup());
const socketPath = `@proxy_handover_test_${process.pid}`;
const secret = randomBytes(32);

function listener(name: string, address: object): object {
  return { name, address, filter_chains: [] };
}

const NO_TLS = { listeners: {}, clusters: {} };

function manager(sockets: ListenSockets): ListenerManager {
  // These listeners carry no local rate limits: no token-bucket slot is ever asked for.
  const noBuckets = { allocate: (root: unknown) => (JSON.stringify(root).includes('local_ratelimit') ? assert.fail('no buckets here') : []), release: () => undefined };
  return new ListenerManager(sockets, () => ({ direction: 'all', strategy: 'immediate', drainTimeMs: 0, startedAt: Date.now() }), noBuckets);
}

describe('listener hand-over between epochs', () => {
  it('gives the next epoch the same sockets by address: port 0 keeps its port, Unix listeners too; a new listener is bound afresh', async () => {
    const pipePath = `${tmp.dir}/ingress.sock`;
    const oldConfig = { static_resources: { listeners: [listener('web', { socket_address: { address: '127.0.0.1', port_value: 0 } }), listener('pipe', { pipe: { path: pipePath } })] } };
    const newConfig = { static_resources: { listeners: [...oldConfig.static_resources.listeners, listener('added', { socket_address: { address: '127.0.0.1', port_value: 0 } })] } };
    const oldSockets = new ListenSockets();
    const old = manager(oldSockets);
    await old.addStatic(oldConfig, NO_TLS);
    const parent = new HotRestartChannel({
      socketPath, socketMode: 0, baseId: 1, epoch: 0, secret, trustRoot: false,
      onRequest: (rq) => {
        const l = rq.pass_listen_socket ? old.forHandOver(rq.pass_listen_socket.address, rq.pass_listen_socket.listener_name ?? '') : undefined;
        return { reply: { pass_listen_socket: { fd: l ? l.fd : -1 } }, fd: l?.fd };
      },
    });
    const child = new HotRestartChannel({ socketPath, socketMode: 0, baseId: 1, epoch: 1, secret, trustRoot: false, onRequest: () => ({}) });
    const inherit: InheritSocket = async (address, listenerName) => {
      const { fd } = await child.request({ pass_listen_socket: { address, listener_name: listenerName } }, { timeoutMs: 2000, expectReply: true });
      return fd >= 0 ? fd : undefined;
    };
    const nextSockets = new ListenSockets(inherit);
    const next = manager(nextSockets);
    try {
      await next.addStatic(newConfig, NO_TLS);
      const [web, pipe, added] = next.listeners.map((l) => nextSockets.open.get(l.socketId)!);
      assert.equal(web!.address, old.listeners[0]!.address, 'the same port, though configured as 0');
      assert.ok(web!.inherited && pipe!.inherited && !added!.inherited);
      assert.equal(pipe!.address, pipePath);
      assert.notEqual(added!.address, web!.address);

      // The inherited descriptor is the listening socket: the next epoch serves its queue.
      const server = createServer((s) => s.end('from the next epoch'));
      await new Promise<void>((resolve) => server.listen({ fd: web!.fd }, resolve));
      const port = Number(/:(\d+)$/.exec(web!.address)![1]);
      const text = await new Promise<string>((resolve) => {
        let t = '';
        connect(port, '127.0.0.1').on('data', (d) => (t += d)).on('end', () => resolve(t));
      });
      assert.equal(text, 'from the next epoch');
      server.close();
    } finally {
      child.close();
      parent.close();
      nextSockets.closeAll();
      oldSockets.closeAll();
    }
  });
});
