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
 * Without the setting a listener accepts through node:net, at no cost.
 */
export function acceptBounded(fd: number, max: number, statPrefix: string, onSocket: (socket: Socket) => void): { close(): void } {
  const perEvent = stats.histogram(`${statPrefix}connections_accepted_per_socket_event`);
  const handle = native.acceptOpen(fd, max, (fds, errno) => {
    perEvent.record(fds.length);
    if (errno !== 0) log.warn(`accepting on ${statPrefix.slice(0, -1)} failed (errno ${errno}); the connections waiting are taken at the next event`);
    for (const accepted of fds) {
      // As node:net's server with pauseOnConnect: nothing is read until the listener has chosen what reads it.
      const socket = new Socket({ fd: accepted, readable: true, writable: true, pauseOnCreate: true } as ConstructorParameters<typeof Socket>[0]);
      onSocket(socket);
    }
  });
  return { close: () => native.acceptClose(handle) };
}

/** max_connections_to_accept_per_socket_event, when set. */
export function maxAcceptsPerEvent(config: { max_connections_to_accept_per_socket_event?: number }): number | undefined {
  const max = config.max_connections_to_accept_per_socket_event;
  return typeof max === 'number' && max > 0 ? max : undefined;
}
