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

export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

export class ListenerSocketRegistry {
  readonly listeners: BoundListener[] = [];

  /** Binds every static listener; on any failure closes what it bound and throws, naming the listener. */
  bindAll(bootstrap: JsonObject): void {
    const configs = (obj(bootstrap.static_resources).listeners ?? []) as JsonObject[];
    try {
      configs.forEach((config, configIndex) => this.bind(config, configIndex));
    } catch (err) {
      this.closeAll();
      throw err;
    }
  }

  private bind(config: JsonObject, configIndex: number): void {
    const name = String(config.name ?? `listener_${configIndex}`);
    const address = obj(config.address);
    const backlog = typeof config.tcp_backlog_size === 'number' ? config.tcp_backlog_size : DEFAULT_BACKLOG;
    const trafficDirection = (config.traffic_direction ?? 'UNSPECIFIED') as BoundListener['trafficDirection'];
    if (address.pipe) {
      const pipe = obj(address.pipe);
      const path = String(pipe.path);
      try {
        const fd = native.listenUnix(path, backlog, typeof pipe.mode === 'number' ? pipe.mode : 0);
        this.listeners.push({ name, address: path, fd, trafficDirection, configIndex, stopped: false });
      } catch (err) {
        throw new ListenerBindError(`cannot bind '${path}' for listener '${name}': ${(err as Error).message}`);
      }
      return;
    }
    const sa = obj(address.socket_address);
    const host = String(sa.address);
    const port = Number(sa.port_value ?? 0);
    try {
      const [fd, bound] = native.listenTcp(host, port, backlog);
      this.listeners.push({ name, address: formatAddress(host, bound), fd, trafficDirection, configIndex, stopped: false });
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
