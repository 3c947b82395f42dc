import { obj } from '../../config/access.js';
import { typeNameOfUrl } from '../../config/wkt.js';
import { configError, type ConfigError } from '../../config/config-error.js';

/**
 * A compressor filter's library must be a compressor library, a decompressor filter's a
 * decompressor library: the other kind's type names it (`envoy.compression.gzip.decompressor`).
 */
export function checkLibraryKind(library: unknown, kind: 'compressor' | 'decompressor', path: string, errors: ConfigError[]): void {
  const typed = obj(obj(library).typed_config)['@type'];
  if (typeof typed !== 'string') return;
  const other = kind === 'compressor' ? 'decompressor' : 'compressor';
  const m = new RegExp(`^envoy\\.extensions\\.(compression\\.\\w+\\.${other})\\.v3\\.\\w+$`).exec(typeNameOfUrl(typed));
  if (m) errors.push(configError('wrong_extension', `${path}.typed_config`, `'envoy.${m[1]}' is not a ${kind} library`));
}
