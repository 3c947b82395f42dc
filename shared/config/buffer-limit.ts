
/**
 * `per_connection_buffer_limit_bytes` of a listener or a cluster: how much a connection of
 * theirs may hold unwritten before the side feeding it stops reading (Envoy's high watermark).
 * Envoy's default is 1 MiB.
 */
export const DEFAULT_BUFFER_LIMIT = 1024 * 1024;

export function bufferLimitOf(config: { per_connection_buffer_limit_bytes?: unknown }): number {
  const v = config.per_connection_buffer_limit_bytes;
  return typeof v === 'number' ? v : DEFAULT_BUFFER_LIMIT;
}
