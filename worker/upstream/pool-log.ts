import type { Socket } from 'node:net';
import { connectionTag } from '../../shared/log/log-tags.js';
import { Level } from '../../shared/log/levels.js';
import { getLogger } from '../../shared/log/logger.js';

/**
 * An upstream HTTP/1.1 connection's part of a request's story at debug, in Envoy's words and
 * under its loggers: the pool (`pool`) reusing a connection or creating one, the codec client
 * (`client`) and the connection (`connection`) connecting, the stream attached, the response
 * complete. Each function tests its logger's level first.
 */

const pool = getLogger('pool', import.meta.url);
const client = getLogger('client', import.meta.url);
const connection = getLogger('connection', import.meta.url);

export function poolLogOn(): boolean {
  return pool.enabled(Level.debug);
}

export function logReuse(socket: Socket): void {
  if (!pool.enabled(Level.debug)) return;
  pool.debug(`${connectionTag(socket)}using existing fully connected connection`);
  pool.debug(`${connectionTag(socket)}creating stream`);
}

/** No connection free: the request waits for one the pool now creates (`connecting`: those already on their way). */
export function logNewConnection(ready: number, busy: number, connecting: number): void {
  if (!pool.enabled(Level.debug)) return;
  pool.debug(`queueing stream due to no available connections (ready=${ready} busy=${busy} connecting=${connecting})`);
  pool.debug('trying to create new connection');
  pool.debug(`creating a new connection (connecting=${connecting})`);
}

/** `codec`: an HTTP connection, whose codec client says it too (a TCP proxy's has none). */
export function logConnecting(socket: Socket, address: string, codec = true): void {
  if (codec && client.enabled(Level.debug)) client.debug(`${connectionTag(socket)}connecting`);
  if (!connection.enabled(Level.debug)) return;
  connection.debug(`${connectionTag(socket)}connecting to ${address}`);
  connection.debug(`${connectionTag(socket)}connection in progress`);
}

/** Connected; `attached`: a request was waiting for it. */
export function logConnected(socket: Socket, attached: boolean, codec = true): void {
  if (connection.enabled(Level.debug)) connection.debug(`${connectionTag(socket)}connected`);
  if (codec && client.enabled(Level.debug)) client.debug(`${connectionTag(socket)}connected`);
  if (!attached || !pool.enabled(Level.debug)) return;
  pool.debug(`${connectionTag(socket)}attaching to next stream`);
  pool.debug(`${connectionTag(socket)}creating stream`);
}

export function logResponseComplete(socket: Socket): void {
  if (client.enabled(Level.debug)) client.debug(`${connectionTag(socket)}response complete`);
  if (!pool.enabled(Level.debug)) return;
  pool.debug(`${connectionTag(socket)}response complete`);
  pool.debug(`${connectionTag(socket)}destroying stream: 0 remaining`);
}

/** The connection closed: by the upstream (0, after `remote close`) or here (1). */
export function logUpstreamClosed(socket: Socket, remote: boolean): void {
  if (!connection.enabled(Level.debug)) return;
  if (remote) connection.debug(`${connectionTag(socket)}remote close`);
  connection.debug(`${connectionTag(socket)}closing socket: ${remote ? 0 : 1}`);
}
