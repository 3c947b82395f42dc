import { Socket } from 'node:net';
import { getLogger } from '../shared/log/logger.js';
import { native } from '../shared/native/index.js';
import { stats } from '../shared/stats/process.js';

const log = getLogger('connection', import.meta.url);

/**
 * A listening socket whose listener sets max_connections_to_accept_per_socket_event: accepted
 * through the addon, at most `max` connections each time the socket is readable (node:net
 * accepts until the backlog is empty), the rest at the next turn of the loop, as Envoy's
 * TcpListenerImpl does. Each turn's count goes to `<prefix>connections_accepted_per_socket_event`.
 * Without the setting a listener accepts through node:net, at no cost, unless the overload
 * manager has stop_accepting_connections (then `max` is undefined: no bound, no histogram), which
 * pauses this socket while it is saturated.
 */
export function acceptBounded(fd: number, max: number | undefined, statPrefix: string, onSocket: (socket: Socket) => void): PausableAccept {
  const perEvent = max !== undefined ? stats.histogram(`${statPrefix}connections_accepted_per_socket_event`) : undefined;
  const handle = native.acceptOpen(fd, max ?? UNBOUNDED, (fds, errno) => {
    perEvent?.record(fds.length);
    if (errno !== 0) log.warn(`accepting on ${statPrefix.slice(0, -1)} failed (errno ${errno}); the connections waiting are taken at the next event`);
    for (const accepted of fds) {
      // As node:net's server with pauseOnConnect: nothing is read until the listener has chosen what reads it.
      const socket = new Socket({ fd: accepted, readable: true, writable: true, pauseOnCreate: true } as ConstructorParameters<typeof Socket>[0]);
      onSocket(socket);
    }
  });
  return { close: () => native.acceptClose(handle), pause: (paused) => native.acceptPause(handle, paused) };
}

/** A listening socket served through the addon: it can stop accepting for a while (stop_accepting_connections). */
export interface PausableAccept {
  close(): void;
  pause(paused: boolean): void;
}

/** Without max_connections_to_accept_per_socket_event: until the backlog is empty, as node:net. */
const UNBOUNDED = 0x7fffffff;

/** max_connections_to_accept_per_socket_event, when set. */
export function maxAcceptsPerEvent(config: { max_connections_to_accept_per_socket_event?: number }): number | undefined {
  const max = config.max_connections_to_accept_per_socket_event;
  return typeof max === 'number' && max > 0 ? max : undefined;
}
