/** Envoy's (spdlog's) log levels, in order. `warn` is accepted on the command line only. */
export const LEVEL_NAMES = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;
export type LevelName = (typeof LEVEL_NAMES)[number];

export const Level = { trace: 0, debug: 1, info: 2, warning: 3, error: 4, critical: 5, off: 6 } as const;

export const SHORT_LEVEL_NAMES = ['T', 'D', 'I', 'W', 'E', 'C', 'O'] as const;

export function parseLevel(text: string, { allowWarn }: { allowWarn: boolean }): number | undefined {
  if (allowWarn && text === 'warn') return Level.warning;
  const i = (LEVEL_NAMES as readonly string[]).indexOf(text);
  return i < 0 ? undefined : i;
}

export function levelName(level: number): LevelName {
  return LEVEL_NAMES[level] ?? 'off';
}

/**
 * Envoy's logger ids, in its registry order (what `POST /logging` lists). They are kept whole so
 * that `--component-log-level` lines written for Envoy keep working; the ones this proxy writes
 * to are main, config, admin, upstream, connection, http, http2, router, runtime, hc, pool,
 * health_checker, stats, filter, file, dns and conn_handler.
 */
export const COMPONENTS = [
  'a2a', 'admin', 'alternate_protocols_cache', 'aws', 'assert', 'backtrace', 'basic_auth', 'cache_filter', 'client',
  'config', 'connection', 'conn_handler', 'compression', 'credential_injector', 'decompression', 'dns', 'dubbo',
  'envoy_bug', 'ext_authz', 'ext_proc', 'rocketmq', 'file', 'filter', 'forward_proxy', 'geolocation', 'grpc',
  'happy_eyeballs', 'hc', 'health_checker', 'http', 'http2', 'hystrix', 'init', 'io', 'jwt', 'json_rpc', 'kafka',
  'key_value_store', 'lua', 'local_rate_limit', 'main', 'matcher', 'mcp', 'misc', 'mongo', 'multi_connection',
  'notification', 'oauth2', 'quic', 'quic_stream', 'pool', 'rate_limit_quota', 'rbac', 'rds', 'redis', 'router',
  'runtime', 'stats', 'secret', 'sse', 'tap', 'testing', 'thrift', 'tracing', 'upstream', 'udp', 'wasm',
  'websocket', 'golang', 'stats_sinks', 'dynamic_modules',
] as const;
export type Component = (typeof COMPONENTS)[number];

export function isComponent(name: string): name is Component {
  return (COMPONENTS as readonly string[]).includes(name);
}
