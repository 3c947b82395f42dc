import { obj } from '../../../config/access.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import { configError, type ConfigError } from '../../../config/config-error.js';

export const RAW_BUFFER = 'envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer';
const NAMES = new Set(['envoy.transport_sockets.raw_buffer', 'raw_buffer']);

/** A transport socket that is plaintext: RawBuffer by its typed_config, or by name when it has none. */
export function isRawBuffer(transportSocket: unknown): boolean {
  const ts = obj(transportSocket);
  const typed = obj(ts.typed_config)['@type'];
  return typeof typed === 'string' ? typeNameOfUrl(typed) === RAW_BUFFER : NAMES.has(String(ts.name ?? ''));
}

/** A transport socket that is not TLS must be raw_buffer (plaintext); `tlsType` is the TLS context the place takes. */
export function checkRawBuffer(transportSocket: unknown, path: string, tlsType: string, errors: ConfigError[]): void {
  if (!isRawBuffer(transportSocket)) errors.push(configError('missing', path, `transport socket '${String(obj(transportSocket).name ?? '')}' needs typed_config: ${tlsType} for TLS, or RawBuffer for plaintext`));
}
