import { closeSync, openSync } from 'node:fs';
import { listenerAccessLogPaths } from '../shared/access-log/loggers.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { ListenerResource } from '../shared/config/resources.js';
import { sharedAddressKey } from '../shared/config/semantic/listeners.js';
import { configuredAddressOf, handOverAddress, ListenerBindError, reusePortOf, socketHandOverAddress, type ListenSocket, type ListenSockets } from './listen-sockets.js';

/** What a listener update opens before it is taken: its access-log files and its listening socket. */

/** A socket a removed or readdressed listener left, in the update that left it. */
export interface Released {
  socket: ListenSocket;
  /** The listener that had it. */
  by: string;
}

/** Opens (creating) each access-log file of the listener once, as the bootstrap's are at start: a path that cannot be written refuses the listener. */
export function openAccessLogs(config: JsonObject): string[] {
  const errors: string[] = [];
  for (const path of listenerAccessLogPaths(config)) {
    try {
      closeSync(openSync(path, 'a'));
    } catch (err) {
      errors.push(`unable to open access log file '${path}': ${(err as Error).message}`);
    }
  }
  return errors;
}

/** The listener's socket: that of its serving or warming version when the address stays, one released in this update for that address, or a new one. */
export async function socketFor(sockets: ListenSockets, config: JsonObject, name: string, versions: (ListenerResource | undefined)[], released: Released[], opened: ListenSocket[]): Promise<ListenSocket> {
  const { address, pipe, udp } = configuredAddressOf(config);
  const key = handOverAddress(address, pipe, udp);
  for (const version of versions) {
    const mine = version && !version.stopped ? sockets.open.get(version.socketId) : undefined;
    if (!mine || socketHandOverAddress(mine) !== key) continue;
    // As Envoy: a socket shared or per worker stays so while the listener lives (remove and add it to change that).
    if (mine.reusePort !== reusePortOf(config)) throw new ListenerBindError(`Listener ${name}: reuse port cannot be changed during an update`);
    if (version!.config.max_connections_to_accept_per_socket_event !== config.max_connections_to_accept_per_socket_event) throw new ListenerBindError(`Listener ${name}: max_connections_to_accept_per_socket_event cannot be changed during an update (a socket accepts as it was first served); remove and add the listener to change it`);
    return mine;
  }
  // A port-0 socket goes only to the listener that had it: port 0 asks for some free port, not for another listener's.
  const free = released.findIndex((r) => socketHandOverAddress(r.socket) === key && (r.by === name || sharedAddressKey(config) !== undefined));
  if (free >= 0) {
    const [taken] = released.splice(free, 1);
    return taken!.socket;
  }
  const socket = await sockets.bind(config, name);
  opened.push(socket);
  return socket;
}

