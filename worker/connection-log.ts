import type { Socket } from 'node:net';
import { connectionTag } from '../shared/log/log-tags.js';
import { Level } from '../shared/log/levels.js';
import { getLogger } from '../shared/log/logger.js';
import { remoteOf } from '../shared/network/connection-origin.js';

/**
 * A downstream connection's part of a request's story at debug, as Envoy tells it: the listener
 * (`conn_handler`) accepted it, and the connection (`connection`) closed, by the client
 * (`remote close`, `closing socket: 0`) or here (`closing socket: 1`). Every accepted connection
 * has its id (newConnectionId, at accept); its close is followed only while `connection` logs at debug.
 */

const handler = getLogger('conn_handler', import.meta.url);
const connection = getLogger('connection', import.meta.url);

/** A connection its listener accepted (its id is given at accept) has its filter chain: Envoy's `new connection`. */
export function connectionAccepted(raw: Socket): void {
  if (handler.enabled(Level.debug)) {
    const from = remoteOf(raw);
    handler.debug(`${connectionTag(raw)}new connection from ${from.ip.includes(':') ? `[${from.ip}]` : from.ip}:${from.port}`);
  }
  if (!connection.enabled(Level.debug)) return;
  let remote = false;
  raw.once('end', () => {
    remote = true;
    connection.debug(`${connectionTag(raw)}remote close`);
  });
  raw.once('close', () => connection.debug(`${connectionTag(raw)}closing socket: ${remote ? 0 : 1}`));
}
