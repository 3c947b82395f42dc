import type { HttpConnectionManager } from '../../shared/config/envoy-types.js';

/**
 * The `server` header of every response a connection manager sends, proxied or its own, as
 * Envoy's encodeHeaders sets it after every filter and the route's mutations:
 * server_header_transformation OVERWRITE (the default) writes `server_name` ("envoy" when unset or
 * empty); APPEND_IF_ABSENT keeps a `server` the response has and adds `server_name` only where it
 * has none; PASS_THROUGH leaves the response's as it is (none on a local reply without one).
 */
export interface ServerHeader {
  readonly name: string;
  readonly mode: 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';
  /** The connection manager's `via`: appended to every response's Via (and to requests', worker/http/request-headers.ts). */
  readonly via?: string;
}

/** Envoy's Utility::appendVia: `via` after the header's value, comma-separated, or alone. */
export function appendVia(existing: unknown, via: string): string {
  const has = typeof existing === 'string' ? existing : Array.isArray(existing) ? existing.join(', ') : '';
  return has ? `${has}, ${via}` : via;
}

export function serverHeaderOf(config: HttpConnectionManager): ServerHeader {
  const mode = config.server_header_transformation === 'APPEND_IF_ABSENT' || config.server_header_transformation === 'PASS_THROUGH' ? config.server_header_transformation : 'OVERWRITE';
  const via = typeof config.via === 'string' && config.via ? { via: config.via } : {};
  return { name: typeof config.server_name === 'string' && config.server_name ? config.server_name : 'envoy', mode, ...via };
}

/** The `server` a response goes with, given the one it has (undefined: none). */
export function serverValue(server: ServerHeader, given: unknown): string | undefined {
  if (server.mode === 'OVERWRITE') return server.name;
  const has = typeof given === 'string' ? given : Array.isArray(given) ? (given[0] as string | undefined) : undefined;
  return server.mode === 'APPEND_IF_ABSENT' ? (has ?? server.name) : has;
}

/** Sets `headers.server` as the connection manager would (removes it where it has none to send). */
export function setServer(headers: Record<string, unknown>, server: ServerHeader): void {
  const value = serverValue(server, headers.server);
  if (value === undefined) delete headers.server;
  else headers.server = value;
  if (server.via !== undefined) headers.via = appendVia(headers.via, server.via);
}
