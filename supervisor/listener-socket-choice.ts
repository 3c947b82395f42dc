import { closeSync, openSync } from 'node:fs';
import { listenerAccessLogPaths } from '../shared/access-log/loggers.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { socketIdsOf, type ListenerResource } from '../shared/config/resources.js';
import { list, obj } from '../shared/config/access.js';
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

/**
 * A socket of the listener (`config.address`): one of its serving or warming version's when the
 * address stays (`taken`: those this update gave the listener already), one released in this update
 * for that address, or a new one, handed over under `handOverKey` (an additional address's is the
 * listener's name and its place).
 */
export async function socketFor(sockets: ListenSockets, config: JsonObject, name: string, versions: (ListenerResource | undefined)[], released: Released[], opened: ListenSocket[], handOverKey = name, taken: ReadonlySet<number> = new Set()): Promise<ListenSocket> {
  const { address, pipe, udp } = configuredAddressOf(config);
  const key = handOverAddress(address, pipe, udp);
  for (const version of versions) {
    if (!version || version.stopped) continue;
    for (const id of socketIdsOf(version)) {
      const mine = taken.has(id) ? undefined : sockets.open.get(id);
      if (!mine || socketHandOverAddress(mine) !== key) continue;
      // As Envoy: a socket shared or per worker stays so while the listener lives (remove and add it to change that).
      if (mine.reusePort !== reusePortOf(config)) throw new ListenerBindError(`Listener ${name}: reuse port cannot be changed during an update`);
      if (version.config.max_connections_to_accept_per_socket_event !== config.max_connections_to_accept_per_socket_event) throw new ListenerBindError(`Listener ${name}: max_connections_to_accept_per_socket_event cannot be changed during an update (a socket accepts as it was first served); remove and add the listener to change it`);
      return mine;
    }
  }
  // A port-0 socket goes only to the listener that had it: port 0 asks for some free port, not for another listener's.
  const free = released.findIndex((r) => socketHandOverAddress(r.socket) === key && (r.by === name || sharedAddressKey(config) !== undefined));
  if (free >= 0) {
    const [got] = released.splice(free, 1);
    return got!.socket;
  }
  const socket = await sockets.bind(config, name, handOverKey);
  opened.push(socket);
  return socket;
}

/** A dynamic listener's sockets: its address's, then one per additional_addresses entry (see socketFor). */
export async function socketsFor(sockets: ListenSockets, config: JsonObject, name: string, versions: (ListenerResource | undefined)[], released: Released[], opened: ListenSocket[]): Promise<{ socket: ListenSocket; additional?: { socketIds: number[]; addresses: string[] } }> {
  const extra = list(config.additional_addresses);
  if (extra.length === 0) return { socket: await socketFor(sockets, config, name, versions, released, opened) };
  // One that cannot be had refuses the listener: what this call opened closes, what it took from `released` goes back.
  const releasedBefore = [...released];
  const openedBefore = opened.length;
  try {
    const socket = await socketFor(sockets, config, name, versions, released, opened);
    const taken = new Set([socket.id]);
    const additional = { socketIds: [] as number[], addresses: [] as string[] };
    for (const [j, a] of extra.entries()) {
      const s = await socketFor(sockets, { ...config, address: obj(a).address }, name, versions, released, opened, `${name}\u0000additional${j}`, taken);
      taken.add(s.id);
      additional.socketIds.push(s.id);
      additional.addresses.push(s.address);
    }
    return { socket, additional };
  } catch (err) {
    for (const s of opened.splice(openedBefore)) sockets.close(s.id);
    released.splice(0, released.length, ...releasedBefore);
    throw err;
  }
}
