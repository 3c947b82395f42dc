import { formatAddress } from '../shared/address.js';
import { obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { ListenerInfo } from '../shared/ipc.js';
import { native } from '../shared/native/index.js';

/**
 * The static listeners' sockets, owned by the supervisor: bound and listening (so connections
 * queue in the kernel from the first moment), but never polled or accepted here. Workers serve
 * them as inherited descriptors; a crashed worker's replacement inherits the same socket, so the
 * listener never closes while the tree lives. Hot restart will hand these same sockets over.
 */

export interface BoundListener {
  name: string;
  /** Envoy's address string: `127.0.0.1:10000`, `[::1]:10000`, or a pipe path (`@name` abstract). */
  address: string;
  /** The address as configured (port 0 stays 0), for hand-over to the next epoch. */
  configuredAddress: string;
  /** Taken from the previous epoch rather than bound here. */
  inherited: boolean;
  /** A Unix (pipe) listener. */
  pipe: boolean;
  fd: number;
  trafficDirection: ListenerInfo['trafficDirection'];
  configIndex: number;
  /** Stopped by /drain_listeners: its descriptor is closed, and no child serves it. */
  stopped: boolean;
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

/**
 * Asks the previous epoch for a listener's socket; resolves to its descriptor, or undefined when
 * the previous epoch has none for that address (then this epoch binds its own).
 */
export type InheritSocket = (address: string, listenerName: string) => Promise<number | undefined>;

export class ListenerSocketRegistry {
  readonly listeners: BoundListener[] = [];

  /**
   * Takes every static listener's socket from the previous epoch when there is one (`inherit`),
   * else binds it; on any failure closes what it has and throws, naming the listener.
   */
  async bindAll(bootstrap: JsonObject, inherit?: InheritSocket): Promise<void> {
    const configs = (obj(bootstrap.static_resources).listeners ?? []) as JsonObject[];
    try {
      for (const [configIndex, config] of configs.entries()) await this.bind(config, configIndex, inherit);
    } catch (err) {
      this.closeAll();
      throw err;
    }
  }

  private async bind(config: JsonObject, configIndex: number, inherit: InheritSocket | undefined): Promise<void> {
    const name = String(config.name ?? `listener_${configIndex}`);
    const address = obj(config.address);
    const backlog = typeof config.tcp_backlog_size === 'number' ? config.tcp_backlog_size : DEFAULT_BACKLOG;
    const trafficDirection = (config.traffic_direction ?? 'UNSPECIFIED') as BoundListener['trafficDirection'];
    const base = { name, trafficDirection, configIndex, stopped: false, pipe: Boolean(address.pipe) };
    if (address.pipe) {
      const pipe = obj(address.pipe);
      const path = String(pipe.path);
      const inherited = await inherit?.(handOverAddress(path, true), name);
      if (inherited !== undefined) {
        this.listeners.push({ ...base, address: path, configuredAddress: path, fd: inherited, inherited: true });
        return;
      }
      try {
        const fd = native.listenUnix(path, backlog, typeof pipe.mode === 'number' ? pipe.mode : 0);
        this.listeners.push({ ...base, address: path, configuredAddress: path, fd, inherited: false });
      } catch (err) {
        throw new ListenerBindError(`cannot bind '${path}' for listener '${name}': ${(err as Error).message}`);
      }
      return;
    }
    const sa = obj(address.socket_address);
    const host = String(sa.address);
    const port = Number(sa.port_value ?? 0);
    const configuredAddress = formatAddress(host, port);
    const inherited = await inherit?.(handOverAddress(configuredAddress, false), name);
    if (inherited !== undefined) {
      const actualPort = native.localPort(inherited);
      this.listeners.push({ ...base, address: formatAddress(host, actualPort), configuredAddress, fd: inherited, inherited: true });
      return;
    }
    try {
      const [fd, bound] = native.listenTcp(host, port, backlog);
      this.listeners.push({ ...base, address: formatAddress(host, bound), configuredAddress, fd, inherited: false });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const reason = e.code === 'EADDRINUSE' ? 'Address already in use' : e.message;
      throw new ListenerBindError(`cannot bind '${formatAddress(host, port)}' for listener '${name}': ${reason}`);
    }
  }

  /** The listeners as a child sees them: descriptors at stdio slots 4, 5, … (after stdin, stdout, stderr and IPC). */
  childView(): ListenerInfo[] {
    return this.listeners.map((l, i) => ({ name: l.name, address: l.address, childFd: 4 + i, trafficDirection: l.trafficDirection, configIndex: l.configIndex, stopped: l.stopped }));
  }

  /** The stdio array entries that hand every listener to a forked child (a stopped one keeps its slot, empty). */
  descriptors(): (number | 'ignore')[] {
    return this.listeners.map((l) => (l.stopped ? 'ignore' : l.fd));
  }

  /** /drain_listeners: close the supervisor's copy; once the workers close theirs, the socket is gone. */
  stop(names: string[]): void {
    for (const l of this.listeners) {
      if (!names.includes(l.name) || l.stopped) continue;
      l.stopped = true;
      try {
        native.closeFd(l.fd);
      } catch {
        // already closed
      }
    }
  }

  /**
   * The socket to hand to the next epoch for `address` (a request by hand-over address): the
   * listener bound there, or, for a port-0 request, the same-named listener configured on port 0.
   */
  forHandOver(address: string, listenerName: string): BoundListener | undefined {
    const live = this.listeners.filter((l) => !l.stopped);
    return (
      live.find((l) => handOverAddress(l.address, l.pipe) === address) ??
      live.find((l) => l.name === listenerName && handOverAddress(l.configuredAddress, l.pipe) === address)
    );
  }

  closeAll(): void {
    for (const l of this.listeners.splice(0)) {
      if (l.stopped) continue;
      try {
        native.closeFd(l.fd);
      } catch {
        // already closed
      }
    }
  }
}
