import { isIP } from 'node:net';
import { obj } from '../access.js';
import { extensionByName, extensionByTypeName, type Extension } from '../../extensions/registry.js';
import type { JsonObject } from '../proto-json.js';
import { typeNameOfUrl } from '../wkt.js';
import { configError, type ConfigError } from '../config-error.js';

/** What the semantic checks share: address helpers and the extension a filter entry names. */

export type Obj = JsonObject;

export function addressText(address: Obj): string {
  const sa = obj(address.socket_address);
  if (address.pipe) return `unix:${obj(address.pipe).path}`;
  const host = String(sa.address ?? '');
  return `${host.includes(':') ? `[${host}]` : host}:${sa.port_value ?? 0}`;
}

/** An address that must be a literal (listeners, admin, STATIC endpoints); UDP only where `udp` allows it (a listener's). */
export function checkLiteralAddress(address: unknown, path: string, errors: ConfigError[], udp = false): void {
  const a = obj(address);
  if (a.pipe) return; // Pipe.path is required by the schema already
  const sa = a.socket_address;
  if (!sa) {
    errors.push(configError('missing', path, 'an address needs socket_address or pipe'));
    return;
  }
  const s = obj(sa);
  if (isIP(String(s.address ?? '')) === 0) errors.push(configError('invalid', `${path}.socket_address.address`, `malformed IP address: ${String(s.address ?? '')}`));
  if (s.protocol === 'UDP' && !udp) errors.push(configError('unsupported', `${path}.socket_address.protocol`, 'UDP is not supported here'));
}

/** The extension a filter entry resolves to: by its typed_config type, else by name. */
export function filterExtension(filter: Obj): Extension | undefined {
  const typed = obj(filter.typed_config)['@type'];
  if (typeof typed === 'string') return extensionByTypeName(typeNameOfUrl(typed));
  return extensionByName(String(filter.name ?? ''));
}
