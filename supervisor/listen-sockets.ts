import { formatAddress } from '../shared/address.js';
import { obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { native } from '../shared/native/index.js';

/**
 * The listening sockets of the tree, owned by the supervisor: bound and listening (so connections
 * queue in the kernel from the first moment), but never polled or accepted here. Workers serve
 * them as inherited descriptors (or ones sent to them later, for listeners added by the listener
 * discovery service); a crashed worker's replacement inherits the same sockets, so a listener
 * never closes while the tree lives. Hot restart hands these same sockets to the next epoch.
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
  fd: number;
}

export class ListenerBindError extends Error {
  readonly code = 'PROXY_LISTENER_BIND';
}

/** Linux caps the backlog at net.core.somaxconn, which is what Envoy uses when none is configured. */
const DEFAULT_BACKLOG = 65535;

/** The hot-restart protocol's address form: `tcp://1.2.3.4:80`, `tcp://[::1]:80`, `unix://<path>`. */
export function handOverAddress(address: string, pipe: boolean): string {
  return pipe ? `unix://${address}` : `tcp://${address}`;
}

/** A listener's address as configured: `127.0.0.1:0` stays port 0; a pipe is its path. */
export function configuredAddressOf(listener: JsonObject): { address: string; pipe: boolean } {
  const address = obj(listener.address);
  if (address.pipe) return { address: String(obj(address.pipe).path), pipe: true };
  const sa = obj(address.socket_address);
  return { address: formatAddress(String(sa.address), Number(sa.port_value ?? 0)), pipe: false };
}

/**
 * Asks the previous epoch for a listener's socket; resolves to its descriptor, or undefined when
 * the previous epoch has none for that address (then this epoch binds its own).
 */
export type InheritSocket = (address: string, listenerName: string) => Promise<number | undefined>;

/** A socket option as the addon sets it: [state (0 before bind, 1 bound, 2 listening), level, name, value]. */
export type NativeSocketOption = [state: number, level: number, name: number, value: number | Buffer];

const STATES: Record<string, number> = { STATE_PREBIND: 0, STATE_BOUND: 1, STATE_LISTENING: 2 };
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
  for (const o of Array.isArray(listener.socket_options) ? (listener.socket_options as JsonObject[]) : []) {
    const value = typeof o.buf_value === 'string' ? Buffer.from(o.buf_value, 'base64') : Number(o.int_value ?? 0);
    out.push([STATES[String(o.state ?? 'STATE_PREBIND')] ?? 0, Number(o.level ?? 0), Number(o.name ?? 0), value]);
  }
  return out;
}

export class ListenSockets {
  private nextId = 1;
  /** Every open socket, in the order they were opened (the order children inherit them in). */
  readonly open = new Map<number, ListenSocket>();

  /** `inherit`: how to ask the previous epoch (hot restart) for a socket before binding one. */
  constructor(private readonly inherit?: InheritSocket) {}

  /** The listener's socket: taken from the previous epoch when it has one, else bound; a bind failure names the listener. */
  async bind(listener: JsonObject, name: string): Promise<ListenSocket> {
    const { address: configuredAddress, pipe } = configuredAddressOf(listener);
    const backlog = typeof listener.tcp_backlog_size === 'number' ? listener.tcp_backlog_size : DEFAULT_BACKLOG;
    const inherited = await this.inherit?.(handOverAddress(configuredAddress, pipe), name);
    const add = (fd: number, address: string, fromParent: boolean): ListenSocket => {
      const socket = { id: this.nextId++, address, configuredAddress, inherited: fromParent, pipe, fd };
      this.open.set(socket.id, socket);
      return socket;
    };
    if (pipe) {
      if (inherited !== undefined) return add(inherited, configuredAddress, true);
      const mode = obj(obj(listener.address).pipe).mode;
      try {
        return add(native.listenUnix(configuredAddress, backlog, typeof mode === 'number' ? mode : 0), configuredAddress, false);
      } catch (err) {
        throw new ListenerBindError(`cannot bind '${configuredAddress}' for listener '${name}': ${(err as Error).message}`);
      }
    }
    const host = String(obj(obj(listener.address).socket_address).address);
    if (inherited !== undefined) return add(inherited, formatAddress(host, native.localPort(inherited)), true);
    try {
      const [fd, bound] = native.listenTcp(host, Number(obj(obj(listener.address).socket_address).port_value ?? 0), backlog, socketOptionsOf(listener, host));
      return add(fd, formatAddress(host, bound), false);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const reason = e.code === 'EADDRINUSE' ? 'Address already in use' : e.message;
      throw new ListenerBindError(`cannot bind '${configuredAddress}' for listener '${name}': ${reason}`);
    }
  }

  /** Closes the supervisor's copy; once the workers close theirs, the socket is gone. */
  close(id: number): void {
    const socket = this.open.get(id);
    if (!socket) return;
    this.open.delete(id);
    try {
      native.closeFd(socket.fd);
    } catch {
      // already closed
    }
  }

  /** The descriptors to hand a forked child, in order, and where each lands in it (from `firstChildFd` on). */
  forChild(firstChildFd: number): { descriptors: number[]; sockets: { id: number; childFd: number }[] } {
    const open = [...this.open.values()];
    return { descriptors: open.map((s) => s.fd), sockets: open.map((s, i) => ({ id: s.id, childFd: firstChildFd + i })) };
  }

  closeAll(): void {
    for (const id of [...this.open.keys()]) this.close(id);
  }
}
