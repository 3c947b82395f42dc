import { fstatSync } from 'node:fs';
import { formatAddress } from '../shared/address.js';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { getLogger } from '../shared/log/logger.js';
import { native } from '../shared/native/index.js';

/**
 * The listening sockets of the tree, owned by the supervisor: bound and listening (so connections
 * queue in the kernel from the first moment), but never polled or accepted here. Workers serve
 * them as descriptors sent on their socket channels (worker-descriptors.ts), at their start and
 * whenever a listener opens one later; a crashed worker's replacement gets the same sockets, so a
 * listener never closes while the tree lives. Hot restart hands these same sockets to the next epoch.
 * A socket outlives a change of its listener when the address stays the same.
 */

export interface ListenSocket {
  id: number;
  /** Envoy's address string: `127.0.0.1:10000`, `[::1]:10000`, or a pipe path (`@name` abstract). */
  address: string;
  /** The address as configured (port 0 stays 0), for hand-over to the next epoch. */
  configuredAddress: string;
  /** Taken from the previous epoch rather than bound here. */
  inherited: boolean;
  /** A Unix (pipe) listener's. */
  pipe: boolean;
  /** A UDP listener's: datagram sockets, one per worker (see bind()). */
  udp: boolean;
  /**
   * `enable_reuse_port`: one SO_REUSEPORT socket per worker, each with its own accept queue (the
   * kernel spreads connections by hash), instead of one socket every worker accepts on.
   */
  reusePort: boolean;
  /**
   * Its descriptors. Shared: one (or, taken from a previous epoch that had per-worker sockets,
   * all of those, each served by every worker). reuse_port: at least one per worker, worker `w`
   * of `n` serving those at indexes `k % n === w`: a previous epoch with more workers hands over
   * every socket it had, so no accept queue is dropped when the concurrency shrinks.
   */
  fds: number[];
}

/** The descriptors of `socket` that worker `worker` of `workers` serves. */
export function fdsOfWorker(socket: ListenSocket, worker: number, workers: number): number[] {
  // Fewer than one per worker: reuse_port could not take effect (see bind), the workers share them.
  return socket.reusePort && socket.fds.length >= workers ? socket.fds.filter((_, k) => k % workers === worker) : socket.fds;
}

/**
 * Whether a listener asks for per-worker sockets: `enable_reuse_port`, else the deprecated
 * `reuse_port`. Off by default here (Envoy's default is on; see docs/architecture.md): one shared socket
 * lets any live worker take a connection while another is being replaced. A Unix socket is always shared.
 */
export function reusePortOf(listener: JsonObject): boolean {
  if (obj(listener.address).pipe) return false;
  // UDP: always a socket per worker, so the kernel's hash keeps each client's datagrams on one worker (its sessions).
  if (obj(obj(listener.address).socket_address).protocol === 'UDP') return true;
  const enable = listener.enable_reuse_port;
  if (typeof enable === 'boolean') return enable;
  return listener.reuse_port === true;
}

const log = getLogger('main', import.meta.url);

export class ListenerBindError extends Error {
  readonly code = 'PROXY_LISTENER_BIND';
}

/** Linux caps the backlog at net.core.somaxconn, which is what Envoy uses when none is configured. */
const DEFAULT_BACKLOG = 65535;

/** The hot-restart protocol's address form: `tcp://1.2.3.4:80`, `udp://1.2.3.4:53`, `tcp://[::1]:80`, `unix://<path>`. */
export function handOverAddress(address: string, pipe: boolean, udp = false): string {
  return pipe ? `unix://${address}` : udp ? `udp://${address}` : `tcp://${address}`;
}

/** A listener's address as configured: `127.0.0.1:0` stays port 0; a pipe is its path. */
export function configuredAddressOf(listener: JsonObject): { address: string; pipe: boolean; udp: boolean } {
  const address = obj(listener.address);
  if (address.pipe) return { address: String(obj(address.pipe).path), pipe: true, udp: false };
  const sa = obj(address.socket_address);
  return { address: formatAddress(String(sa.address), Number(sa.port_value ?? 0)), pipe: false, udp: sa.protocol === 'UDP' };
}

/** A socket's hand-over address, as configured or as bound. */
export function socketHandOverAddress(socket: ListenSocket, bound = false): string {
  return handOverAddress(bound ? socket.address : socket.configuredAddress, socket.pipe, socket.udp);
}

/**
 * Asks the previous epoch for a listener's socket of index `index` (its worker's, with reuse_port);
 * resolves to its descriptor, or undefined when the previous epoch has none (then this epoch binds its own).
 */
export type InheritSocket = (address: string, listenerName: string, index: number) => Promise<number | undefined>;

/** A previous epoch passes at most this many sockets for one address. */
const MAX_HANDED_OVER = 256;

/** A socket option as the addon sets it: [state (0 before bind, 1 bound, 2 listening), level, name, value]. */
export type NativeSocketOption = [state: number, level: number, name: number, value: number | Buffer];

const STATES: Record<string, number> = { STATE_PREBIND: 0, STATE_BOUND: 1, STATE_LISTENING: 2 };
const SOL_SOCKET = 1;
const SO_REUSEPORT = 15;
const SOL_IP = 0;
const IP_FREEBIND = 15;
const SOL_IPV6 = 41;
const IPV6_FREEBIND = 78;

/**
 * A TCP listener's socket options, as Envoy sets them: `freebind` (IP_FREEBIND, or IPV6_FREEBIND
 * for an IPv6 address: bind to an address the host does not have yet), then each of
 * `socket_options` (a raw setsockopt(2) at its state). A failing option fails the bind, naming it.
 */
export function socketOptionsOf(listener: JsonObject, host: string): NativeSocketOption[] {
  const out: NativeSocketOption[] = [];
  if (listener.freebind === true) out.push(host.includes(':') ? [0, SOL_IPV6, IPV6_FREEBIND, 1] : [0, SOL_IP, IP_FREEBIND, 1]);
  for (const o of list(listener.socket_options)) {
    const value = typeof o.buf_value === 'string' ? Buffer.from(o.buf_value, 'base64') : Number(o.int_value ?? 0);
    out.push([STATES[String(o.state ?? 'STATE_PREBIND')] ?? 0, Number(o.level ?? 0), Number(o.name ?? 0), value]);
  }
  return out;
}

export class ListenSockets {
  private nextId = 1;
  /** Every open socket, in the order they were opened (the order workers are sent them in). */
  readonly open = new Map<number, ListenSocket>();

  /**
   * `workers`: how many workers serve (one socket each with reuse_port); `inherit`: how to ask
   * the previous epoch (hot restart) for a socket before binding one.
   */
  constructor(
    private readonly workers: number,
    private readonly inherit?: InheritSocket,
  ) {}

  /** A bootstrap listener's additional_addresses: a socket each, handed over by the listener's key and its place in the list. */
  async bindAdditional(listener: JsonObject, name: string, handOverKey: string): Promise<{ socketIds: number[]; addresses: string[] } | undefined> {
    const extra = list(listener.additional_addresses);
    if (extra.length === 0) return undefined;
    const out = { socketIds: [] as number[], addresses: [] as string[] };
    for (const [j, a] of extra.entries()) {
      const socket = await this.bind({ ...listener, address: obj(a).address }, name, `${handOverKey}\u0000additional${j}`);
      out.socketIds.push(socket.id);
      out.addresses.push(socket.address);
    }
    return out;
  }

  /**
   * The listener's socket: taken from the previous epoch when it has one, else bound; a bind
   * failure names the listener. `handOverKey` is what the previous epoch knows the listener by
   * besides its address (its name, unless it has none: see ListenerManager.addStatic).
   */
  async bind(listener: JsonObject, name: string, handOverKey = name): Promise<ListenSocket> {
    const { address: configuredAddress, pipe, udp } = configuredAddressOf(listener);
    const reusePort = reusePortOf(listener);
    const backlog = typeof listener.tcp_backlog_size === 'number' ? listener.tcp_backlog_size : DEFAULT_BACKLOG;
    // Every socket the previous epoch has for the address: one, or one per its worker with reuse_port.
    const inherited: number[] = [];
    const seen = new Set<number>();
    for (let k = 0; this.inherit && k < MAX_HANDED_OVER; k++) {
      const fd = await this.inherit(handOverAddress(configuredAddress, pipe, udp), handOverKey, k);
      if (fd === undefined) break;
      // A previous build answered every index with its one socket: a socket seen already ends the list.
      const inode = fstatSync(fd).ino;
      if (seen.has(inode)) {
        native.closeFd(fd);
        break;
      }
      seen.add(inode);
      inherited.push(fd);
    }
    const add = (fds: number[], address: string): ListenSocket => {
      const socket = { id: this.nextId++, address, configuredAddress, inherited: inherited.length > 0, pipe, udp, reusePort, fds };
      this.open.set(socket.id, socket);
      return socket;
    };
    const failed = (err: unknown): ListenerBindError => {
      const e = err as NodeJS.ErrnoException;
      const reason = e.code === 'EADDRINUSE' ? 'Address already in use' : e.message;
      return new ListenerBindError(`cannot bind '${configuredAddress}' for listener '${name}': ${reason}`);
    };
    if (pipe) {
      if (inherited.length) return add(inherited, configuredAddress);
      const mode = obj(obj(listener.address).pipe).mode;
      try {
        return add([native.listenUnix(configuredAddress, backlog, typeof mode === 'number' ? mode : 0)], configuredAddress);
      } catch (err) {
        throw failed(err);
      }
    }
    const sa = obj(obj(listener.address).socket_address);
    const host = String(sa.address);
    const options = socketOptionsOf(listener, host);
    if (reusePort) options.unshift([0, SOL_SOCKET, SO_REUSEPORT, 1]);
    const fds = [...inherited];
    let port = fds.length ? native.localPort(fds[0]!) : Number(sa.port_value ?? 0);
    try {
      // With reuse_port, one socket per worker on the same port (the first one fixes a port-0 listener's port).
      while (fds.length === 0 || (reusePort && fds.length < this.workers)) {
        const [fd, bound] = udp ? native.bindUdp(host, port, options) : native.listenTcp(host, port, backlog, options);
        fds.push(fd);
        port = bound;
      }
    } catch (err) {
      if (!inherited.length) {
        for (const fd of fds) native.closeFd(fd);
        throw failed(err);
      }
      // The previous epoch's socket is shared (no SO_REUSEPORT): the workers share what it passed until a cold start.
      log.warn(`listener '${name}': enable_reuse_port cannot take effect on ${configuredAddress} taken from the previous epoch (${(err as Error).message}); its workers share the socket it passed`);
    }
    return add(fds, formatAddress(host, port));
  }

  /** Closes the supervisor's copy; once the workers close theirs, the socket is gone. */
  close(id: number): void {
    const socket = this.open.get(id);
    if (!socket) return;
    this.open.delete(id);
    for (const fd of socket.fds) {
      try {
        native.closeFd(fd);
      } catch {
        // already closed
      }
    }
  }

  /** Every socket open now. */
  openSockets(): IterableIterator<ListenSocket> {
    return this.open.values();
  }

  /** The descriptors worker `worker` serves for `socket`. */
  ofWorker(socket: ListenSocket, worker: number): number[] {
    return fdsOfWorker(socket, worker, this.workers);
  }

  closeAll(): void {
    for (const id of [...this.open.keys()]) this.close(id);
  }
}
