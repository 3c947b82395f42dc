import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { HotRestartChannel } from '../supervisor/hot-restart/protocol.js';
import { ListenSockets, type InheritSocket } from '../supervisor/listen-sockets.js';
import { ListenerManager } from '../supervisor/listener-manager.js';
import { staticListenerNames } from '../shared/config/resources.js';
import { tempDir } from './helpers/cli.js';

const tmp = tempDir();
after(() => tmp.cleanup());
const socketPath = `@proxy_handover_test_${process.pid}`;
const secret = randomBytes(32);

function listener(name: string, address: object): object {
  return { name, address, filter_chains: [] };
}

const NO_TLS = { listeners: {}, clusters: {} };
const TCP_CHAIN = { filters: [{ name: 'tcp', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'tcp', cluster: 'backend' } }] };

function manager(sockets: ListenSockets): ListenerManager {
  // These listeners carry no local rate limits: no token-bucket slot is ever asked for.
  const noBuckets = { allocate: (root: unknown) => (JSON.stringify(root).includes('local_ratelimit') ? assert.fail('no buckets here') : []), release: () => undefined };
  return new ListenerManager(sockets, () => ({ direction: 'all', strategy: 'immediate', drainTimeMs: 0, startedAt: Date.now() }), noBuckets);
}

/** A parent epoch's channel answering for `old` socket by socket, as child-link does, and the next epoch's way to ask it. */
function channels(old: ListenerManager, baseId: number): { parent: HotRestartChannel; child: HotRestartChannel; inherit: InheritSocket } {
  const path = `${socketPath}_${baseId}`;
  const parent = new HotRestartChannel({
    socketPath: path, socketMode: 0, baseId, epoch: 0, secret, trustRoot: false,
    onRequest: (rq) => {
      const l = rq.pass_listen_socket ? old.forHandOver(rq.pass_listen_socket.address, rq.pass_listen_socket.listener_name ?? '') : undefined;
      const fd = l?.fds[rq.pass_listen_socket?.worker_index ?? 0];
      return { reply: { pass_listen_socket: { fd: fd ?? -1 } }, fd };
    },
  });
  const child = new HotRestartChannel({ socketPath: path, socketMode: 0, baseId, epoch: 1, secret, trustRoot: false, onRequest: () => ({}) });
  const inherit: InheritSocket = async (address, listenerName, index) => {
    const { fd } = await child.request({ pass_listen_socket: { address, worker_index: index, listener_name: listenerName } }, { timeoutMs: 2000, expectReply: true });
    return fd >= 0 ? fd : undefined;
  };
  return { parent, child, inherit };
}

/** The text a TCP server on `port` sends before it ends. */
function fetchText(port: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let t = '';
    connect(port, '127.0.0.1').on('data', (d) => (t += d)).on('end', () => resolve(t)).on('error', reject);
  });
}

describe('listener hand-over between epochs', () => {
  it('gives the next epoch the same sockets by address: port 0 keeps its port, Unix listeners too; a new listener is bound afresh', async () => {
    const pipePath = `${tmp.dir}/ingress.sock`;
    const oldConfig = { static_resources: { listeners: [listener('web', { socket_address: { address: '127.0.0.1', port_value: 0 } }), listener('pipe', { pipe: { path: pipePath } })] } };
    const newConfig = { static_resources: { listeners: [...oldConfig.static_resources.listeners, listener('added', { socket_address: { address: '127.0.0.1', port_value: 0 } })] } };
    const oldSockets = new ListenSockets(1);
    const old = manager(oldSockets);
    await old.addStatic(oldConfig, staticListenerNames(oldConfig), NO_TLS);
    const { parent, child, inherit } = channels(old, 1);
    const nextSockets = new ListenSockets(1, inherit);
    const next = manager(nextSockets);
    try {
      await next.addStatic(newConfig, staticListenerNames(newConfig), NO_TLS);
      const [web, pipe, added] = next.listeners.map((l) => nextSockets.open.get(l.socketId)!);
      assert.equal(web!.address, old.listeners[0]!.address, 'the same port, though configured as 0');
      assert.ok(web!.inherited && pipe!.inherited && !added!.inherited);
      assert.equal(pipe!.address, pipePath);
      assert.notEqual(added!.address, web!.address);

      // The inherited descriptor is the listening socket: the next epoch serves its queue.
      const server = createServer((s) => s.end('from the next epoch'));
      assert.equal(web!.fds.length, 1);
      await new Promise<void>((resolve) => server.listen({ fd: web!.fds[0]! }, resolve));
      const port = Number(/:(\d+)$/.exec(web!.address)![1]);
      assert.equal(await fetchText(port), 'from the next epoch');
      server.close();
    } finally {
      child.close();
      parent.close();
      nextSockets.closeAll();
      oldSockets.closeAll();
    }
  });

  it('with enable_reuse_port, binds a socket per worker on one port and hands every one over: a next epoch with fewer workers serves them all, one with more binds the rest', async () => {
    const reuse = (port = 0) => ({ static_resources: { listeners: [{ ...listener('web', { socket_address: { address: '127.0.0.1', port_value: port } }), enable_reuse_port: true }] } });
    const oldSockets = new ListenSockets(3);
    const old = manager(oldSockets);
    await old.addStatic(reuse(), staticListenerNames(reuse()), NO_TLS);
    const first = oldSockets.open.get(old.listeners[0]!.socketId)!;
    assert.equal(first.fds.length, 3, 'one socket per worker');
    assert.equal(new Set(first.fds.map((fd) => fstatSync(fd).ino)).size, 3, 'three sockets, not one shared');
    assert.deepEqual(oldSockets.ofWorker(first, 1), [first.fds[1]]);
    const port = Number(/:(\d+)$/.exec(first.address)![1]);

    // Two workers now: they take all three sockets (worker 0 serves two), so no accept queue is left behind.
    const a = channels(old, 2);
    const twoSockets = new ListenSockets(2, a.inherit);
    const two = manager(twoSockets);
    // Four workers then: the three it inherits, and a fourth bound on the same port.
    let b: ReturnType<typeof channels> | undefined;
    const fourSockets = { closeAll: () => undefined } as Pick<ListenSockets, 'closeAll'>;
    const servers: ReturnType<typeof createServer>[] = [];
    try {
      await two.addStatic(reuse(), staticListenerNames(reuse()), NO_TLS);
      const second = twoSockets.open.get(two.listeners[0]!.socketId)!;
      assert.ok(second.inherited);
      assert.equal(second.fds.length, 3);
      assert.deepEqual(second.fds.map((fd) => fstatSync(fd).ino), first.fds.map((fd) => fstatSync(fd).ino), 'the same sockets, in order');
      assert.deepEqual(twoSockets.ofWorker(second, 0), [second.fds[0], second.fds[2]]);
      assert.deepEqual(twoSockets.ofWorker(second, 1), [second.fds[1]]);

      b = channels(two, 3);
      const four = new ListenSockets(4, b.inherit);
      fourSockets.closeAll = () => four.closeAll();
      const fourManager = manager(four);
      await fourManager.addStatic(reuse(), staticListenerNames(reuse()), NO_TLS);
      const third = four.open.get(fourManager.listeners[0]!.socketId)!;
      assert.equal(third.fds.length, 4);
      assert.equal(third.address, first.address);
      // Every socket accepts: each one serves what the kernel gives it.
      for (const [i, fd] of third.fds.entries()) {
        const server = createServer((s) => s.end(`socket ${i}`));
        servers.push(server);
        await new Promise<void>((resolve) => server.listen({ fd }, resolve));
      }
      oldSockets.closeAll();
      twoSockets.closeAll();
      const seen = new Set<string>();
      for (let i = 0; i < 200 && seen.size < 4; i++) seen.add(await fetchText(port));
      assert.equal(seen.size, 4, `connections reach every socket (saw ${[...seen].join(', ')})`);
    } finally {
      for (const server of servers) server.close();
      a.child.close();
      a.parent.close();
      b?.child.close();
      b?.parent.close();
      fourSockets.closeAll();
      twoSockets.closeAll();
      oldSockets.closeAll();
    }
  });

  it('a next epoch that asks for reuse_port where the previous one shared its socket keeps sharing it; an update may not change reuse_port', async () => {
    const config = (reusePort: boolean) => ({ static_resources: { listeners: [{ ...listener('web', { socket_address: { address: '127.0.0.1', port_value: 0 } }), enable_reuse_port: reusePort }] } });
    const oldSockets = new ListenSockets(2);
    const old = manager(oldSockets);
    await old.addStatic(config(false), staticListenerNames(config(false)), NO_TLS);
    const shared = oldSockets.open.get(old.listeners[0]!.socketId)!;
    assert.equal(shared.fds.length, 1);
    const { parent, child, inherit } = channels(old, 4);
    const nextSockets = new ListenSockets(2, inherit);
    const next = manager(nextSockets);
    try {
      await next.addStatic(config(true), staticListenerNames(config(true)), NO_TLS);
      const socket = nextSockets.open.get(next.listeners[0]!.socketId)!;
      assert.equal(socket.fds.length, 1, 'no second socket can bind beside one without SO_REUSEPORT');
      assert.deepEqual(nextSockets.ofWorker(socket, 1), socket.fds, 'both workers share it');

      // A listener from the listener discovery service keeps its kind of socket across updates, as Envoy's.
      const lds = (version: string, reusePort: boolean) =>
        next.applyLds(version, [{ '@type': 'type.googleapis.com/envoy.config.listener.v3.Listener', ...listener('lds', { socket_address: { address: '127.0.0.1', port_value: 0 } }), filter_chains: [TCP_CHAIN], enable_reuse_port: reusePort }], { unknownFields: 'reject', disabledExtensions: new Set() }, new Set(['backend']));
      const added = await lds('1', true);
      assert.deepEqual(added.rejected, []);
      assert.equal(added.openedSockets[0]!.fds.length, 2, 'one per worker');
      const changed = await lds('2', false);
      assert.deepEqual(changed.rejected, ["listener 'lds': Listener lds: reuse port cannot be changed during an update"]);
    } finally {
      child.close();
      parent.close();
      nextSockets.closeAll();
      oldSockets.closeAll();
    }
  });

  it('an update may not change max_connections_to_accept_per_socket_event either: the socket accepts as it was first served', async () => {
    const sockets = new ListenSockets(1);
    const m = manager(sockets);
    try {
      const lds = (version: string, max: number | undefined, statPrefix = 'lds') =>
        m.applyLds(version, [{ '@type': 'type.googleapis.com/envoy.config.listener.v3.Listener', ...listener('lds', { socket_address: { address: '127.0.0.1', port_value: 0 } }), stat_prefix: statPrefix, filter_chains: [TCP_CHAIN], ...(max === undefined ? {} : { max_connections_to_accept_per_socket_event: max }) }], { unknownFields: 'reject', disabledExtensions: new Set() }, new Set(['backend']));
      assert.deepEqual((await lds('1', 2)).rejected, []);
      assert.deepEqual((await lds('2', 2, 'renamed')).rejected, [], 'another change keeps the socket');
      assert.deepEqual((await lds('3', 3)).rejected, ["listener 'lds': Listener lds: max_connections_to_accept_per_socket_event cannot be changed during an update (a socket accepts as it was first served); remove and add the listener to change it"]);
      assert.deepEqual((await lds('4', undefined)).rejected.length, 1);
    } finally {
      sockets.closeAll();
    }
  });
});
