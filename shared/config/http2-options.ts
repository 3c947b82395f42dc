import type { Settings } from 'node:http2';
import { list, obj } from './access.js';
import { durationMs } from './wkt.js';
import { configError, type ConfigError } from './config-error.js';

/**
 * envoy.config.core.v3.Http2ProtocolOptions as node:http2 takes it, for the connection manager's
 * sessions with clients and a cluster's sessions with its hosts. Only what is configured is set:
 * unset fields keep Node's defaults (64 KiB windows rather than Envoy's 256 MiB, since Node buffers
 * a paused stream's window in the worker's memory, where Envoy has its own buffer limits).
 */
export interface Http2Tuning {
  /** SETTINGS sent to the peer: header table size, concurrent streams, stream window, extended CONNECT, custom parameters. */
  settings: Settings;
  /** initial_connection_window_size: the session's own receive window. */
  connectionWindow: number | undefined;
  /** connection_keepalive: a PING every interval (± jitter); no answer within the timeout closes the connection. */
  keepalive: { intervalMs: number; timeoutMs: number; jitter: number } | undefined;
}

/** SETTINGS identifiers a named field owns (RFC 9113 §6.5.2, RFC 8441): custom_settings_parameters may not set them. */
const STANDARD_SETTINGS = new Set([1, 2, 3, 4, 5, 6, 8]);

export function http2Tuning(options: unknown): Http2Tuning {
  const o = obj(options);
  const settings: Settings = {};
  if (typeof o.hpack_table_size === 'number') settings.headerTableSize = o.hpack_table_size;
  if (typeof o.max_concurrent_streams === 'number') settings.maxConcurrentStreams = o.max_concurrent_streams;
  if (typeof o.initial_stream_window_size === 'number') settings.initialWindowSize = o.initial_stream_window_size;
  if (o.allow_connect === true) settings.enableConnectProtocol = true;
  const custom = list(o.custom_settings_parameters);
  if (custom.length) settings.customSettings = Object.fromEntries(custom.map((p) => [Number(p.identifier), Number(p.value)]));
  const k = o.connection_keepalive === undefined ? undefined : obj(o.connection_keepalive);
  return {
    settings,
    connectionWindow: typeof o.initial_connection_window_size === 'number' ? o.initial_connection_window_size : undefined,
    keepalive: k && typeof k.interval === 'string' ? { intervalMs: durationMs(k.interval), timeoutMs: durationMs(String(k.timeout)), jitter: k.interval_jitter === undefined ? 0.15 : Number(obj(k.interval_jitter).value ?? 0) / 100 } : undefined,
  };
}

/** What Envoy refuses in these options beyond their field constraints (custom parameters that shadow a named one). */
export function checkHttp2Options(options: unknown, path: string, errors: ConfigError[]): void {
  for (const [i, p] of list(obj(options).custom_settings_parameters).entries()) {
    const id = Number(p.identifier);
    if (STANDARD_SETTINGS.has(id)) errors.push(configError('invalid', `${path}.custom_settings_parameters[${i}].identifier`, `${id} is a standard SETTINGS parameter; set it with its named field`));
  }
}
