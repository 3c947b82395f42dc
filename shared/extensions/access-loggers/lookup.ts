import { obj } from '../../config/access.js';
import type { JsonObject } from '../../config/proto-json.js';
import { typeNameOfUrl } from '../../config/wkt.js';
import { isAccessLogger, type AccessLoggerDescriptor } from '../descriptor.js';
import * as folders from './index.js';

/**
 * The access logger an `access_log` entry names: by its typed_config's type, else by its name
 * (deprecated names too). Read by the code that writes access logs (shared/access-log/loggers.ts),
 * which needs no other extension.
 */

const byKey = new Map<string, AccessLoggerDescriptor>();
for (const d of Object.values(folders).flat()) {
  if (!isAccessLogger(d)) continue;
  for (const key of [d.typeName, d.name, ...d.deprecatedNames]) byKey.set(key, d);
}

/** undefined: the entry names no access logger (or another extension's type); `typeName` says which it named. */
export function accessLoggerOf(entry: JsonObject): { logger: AccessLoggerDescriptor | undefined; typeName: string | undefined } {
  const typed = obj(entry.typed_config)['@type'];
  if (typeof typed === 'string') {
    const typeName = typeNameOfUrl(typed);
    return { logger: byKey.get(typeName), typeName };
  }
  const logger = byKey.get(String(entry.name ?? ''));
  return { logger, typeName: logger?.typeName };
}
