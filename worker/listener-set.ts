import { dgramModule } from '../shared/builtins.js';
import { createServer, isIPv6, type Socket } from 'node:net';
import { socketIdsOf, type ListenerResource } from '../shared/config/resources.js';
import type { DrainOrder } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import type { SocketInbox } from '../shared/socket-channel.js';
import { stats } from '../shared/stats/process.js';
import { ServedListener, type ListenerContext } from './listeners.js';
import { working } from '../shared/idle-housekeeping.js';
import { listenerStatPrefix } from '../shared/stats/scopes.js';
import { acceptBounded, maxAcceptsPerEvent, type PausableAccept } from './bounded-accept.js';
import { onStopAccepting, overload } from './overload.js';
import { ACTIONS } from '../shared/overload/config.js';

/**
 * Every listener a worker serves, and the listening sockets they accept on. A socket is served
 * by one net.Server for as long as the supervisor keeps it; each connection goes to the listener
 * that owns the socket at that moment, so a listener replaced on the same address hands over
 * without a gap: new connections go to the new version, the old one's connections drain.
 * Changes are applied one at a time, in the order the supervisor sent them.
 */

const log = getLogger('main', import.meta.url);

export class ListenerSet {
  /** What serves each socket: a net.Server accepting on each descriptor this worker has of it (a UDP listener's: a datagram socket reading it). */
  private readonly servers = new Map<number, { close(): unknown }[]>();
  /** Which listener a socket's connections go to. */
  private readonly owners = new Map<number, ServedListener>();
  private readonly active = new Map<string, ServedListener>();
  private readonly draining = new Set<ServedListener>();
  private queue: Promise<void> = Promise.resolve();
  private readonly createSuccess = stats.counter('listener_manager.listener_create_success');
  private readonly createFailure = stats.counter('listener_manager.listener_create_failure');

  /** The sockets that stop_accepting_connections pauses, by socket id. */
  private readonly pausable = new Map<number, PausableAccept[]>();

  private readonly ctx: ListenerContext;

  constructor(
    private readonly inbox: SocketInbox,
    ctx: Omit<ListenerContext, 'totalConnections'>,
  ) {
    this.ctx = { ...ctx, totalConnections: (all) => this.totalConnections(all) };
    if (overload.pausesAccepting) onStopAccepting((stop) => this.pauseAccepting(stop));
  }

  /**
   * Every listener's open connections, in every worker (the global connection limit): each name
   * counts once; `all` false leaves out listeners with ignore_global_conn_limit (the overload
   * manager's monitor counts only those it limits, as Envoy's).
   */
  private totalConnections(all: boolean): number {
    const names = new Map<string, ServedListener>();
    for (const l of [...this.draining, ...this.active.values()]) if (all || !l.ignoresGlobalLimit) names.set(l.name, l);
    let total = 0;
    for (const l of names.values()) total += l.openConnectionCount();
    return total;
  }

  /** stop_accepting_connections: every socket of a listener not bypassing the overload manager stops accepting (or starts again). */
  private pauseAccepting(stop: boolean): void {
    for (const [id, acceptors] of this.pausable) {
      const paused = stop && !this.owners.get(id)?.bypassesOverload;
      for (const a of acceptors) a.pause(paused);
    }
    log.info(`${stop ? 'stopped' : 'started again'} accepting connections (${ACTIONS.stopAcceptingConnections})`);
  }

  get size(): number {
    return this.active.size;
  }

  /** Serves the listeners the worker starts with (all but those stopped by /drain_listeners); a failure fails the start. */
  start(resources: ListenerResource[]): Promise<void> {
    // First in the queue: changes that arrive meanwhile apply after it.
    const started = this.queue.then(async () => {
      for (const resource of resources) {
        if (resource.stopped) continue;
        const listener = new ServedListener(resource, this.ctx);
        for (const id of socketIdsOf(resource)) await this.serve(id, listener);
        this.active.set(resource.name, listener);
        this.createSuccess.inc();
      }
    });
    this.queue = started.catch(() => undefined);
    return started;
  }

  /** A listener new or changed: from now on its socket's connections go to it; the previous version drains. */
  upsert(resource: ListenerResource, inPlace: boolean, order: DrainOrder): void {
    this.enqueue(`add or update listener '${resource.name}'`, async () => {
      const previous = this.active.get(resource.name);
      let listener: ServedListener;
      try {
        listener = new ServedListener(resource, this.ctx, inPlace ? previous : undefined);
        for (const id of socketIdsOf(resource)) await this.serve(id, listener);
      } catch (err) {
        this.createFailure.inc();
        throw err;
      }
      this.active.set(resource.name, listener);
      this.createSuccess.inc();
      if (previous) {
        for (const id of socketIdsOf(previous.resource)) if (this.owners.get(id) === previous) this.owners.delete(id);
        this.drainAway(previous, order, inPlace ? listener : undefined);
      }
    });
  }

  /** A listener's TLS contexts were built again (their SDS secrets came or changed): new handshakes use them. */
  updateTls(name: string, tls: ListenerResource['tls']): void {
    this.enqueue(`update TLS of listener '${name}'`, async () => this.active.get(name)?.updateTls(tls));
  }

  /** A listener removed: it no longer gets connections; its own drain. */
  remove(name: string, order: DrainOrder): void {
    this.enqueue(`remove listener '${name}'`, async () => {
      const listener = this.active.get(name);
      if (!listener) return;
      this.active.delete(name);
      for (const id of socketIdsOf(listener.resource)) if (this.owners.get(id) === listener) this.owners.delete(id);
      this.drainAway(listener, order);
    });
  }

  /** The supervisor closed these sockets: no listener uses them any more. */
  closeSockets(ids: number[]): void {
    this.enqueue('close sockets', async () => {
      for (const id of ids) {
        for (const server of this.servers.get(id) ?? []) server.close();
        this.servers.delete(id);
        this.pausable.delete(id);
        this.owners.delete(id);
        this.inbox.discard(id);
      }
    });
  }

  /** /drain_listeners: these listeners stop accepting; their connections go on. */
  stopAccepting(names: string[]): Promise<void> {
    return this.enqueue('stop listeners', async () => {
      for (const name of names) {
        const listener = this.active.get(name);
        if (!listener) continue;
        // A UDP listener's sessions cannot answer without its socket: they end with it (their clients' next datagrams make new ones elsewhere).
        listener.udp?.close();
        for (const id of socketIdsOf(listener.resource)) {
          for (const server of this.servers.get(id) ?? []) server.close();
          this.servers.delete(id);
          this.pausable.delete(id);
          this.owners.delete(id);
        }
      }
    });
  }

  /** Shutdown: stop accepting everywhere; resolves once every connection has closed. */
  close(): Promise<void> {
    for (const servers of this.servers.values()) for (const server of servers) server.close();
    this.servers.clear();
    this.pausable.clear();
    return Promise.all([...this.active.values(), ...this.draining].map((l) => l.close())).then(() => undefined);
  }

  private drainAway(listener: ServedListener, order: DrainOrder, successor?: ServedListener): void {
    this.draining.add(listener);
    void listener.drain(order, successor).then(() => this.draining.delete(listener));
  }

  /** Makes `listener` the owner of socket `id`, serving the socket first if this worker does not yet. */
  private async serve(id: number, listener: ServedListener): Promise<void> {
    if (!this.servers.has(id)) {
      const servers: { close(): unknown }[] = [];
      for (const fd of await this.inbox.take(id)) {
        if (listener.udp) {
          // The listener's datagrams: each goes to the socket's owner at that moment.
          const host = String(((listener.resource.config.address as { socket_address?: { address?: string } }).socket_address ?? {}).address ?? '');
          const socket = dgramModule().createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4' });
          socket.on('message', (data, peer) => this.owners.get(id)?.onDatagram(socket, data, peer));
          socket.on('error', (err) => log.warn(`UDP listener '${listener.name}': ${err.message}`));
          servers.push(socket);
          await new Promise<void>((resolve) => socket.bind({ fd }, resolve));
          continue;
        }
        const max = maxAcceptsPerEvent(listener.resource.config);
        if (max !== undefined || overload.pausesAccepting) {
          const acceptor = acceptBounded(fd, max, listenerStatPrefix(listener.resource.address, listener.resource.config.stat_prefix), (socket) => this.dispatch(id, socket));
          servers.push(acceptor);
          if (overload.pausesAccepting) {
            this.pausable.set(id, [...(this.pausable.get(id) ?? []), acceptor]);
            if (overload.stopAccepting && !listener.bypassesOverload) acceptor.pause(true);
          }
          continue;
        }
        const server = createServer({ pauseOnConnect: true }, (socket) => this.dispatch(id, socket));
        servers.push(server);
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ fd }, () => {
            server.off('error', reject);
            resolve();
          });
        });
      }
      this.servers.set(id, servers);
    }
    this.owners.set(id, listener);
  }

  private dispatch(id: number, socket: Socket): void {
    working(); // after an idle spell, the optimising compiler is on again before the connection's first request
    const owner = this.owners.get(id);
    if (owner) owner.onConnection(socket);
    else socket.destroy(); // its listener was removed an instant ago; the socket is closing
  }

  private enqueue(what: string, op: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(op).catch((err: Error) => log.error(`could not ${what}: ${err.message}`));
    return this.queue;
  }
}
