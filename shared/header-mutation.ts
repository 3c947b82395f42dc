import type { AccessLogEntry } from './access-log/entry.js';
import { compileTextFormat, constantFormat, type LogFormatter } from './access-log/format.js';
import { list, obj } from './config/access.js';
import type { JsonObject } from './config/proto-json.js';
import { configError, type ConfigError } from './config/config-error.js';

/**
 * Envoy's HeaderValueOption lists (`headers_to_add`): each header's value is a substitution
 * format (`%RESPONSE_CODE%`, `%REQ(x-foo)%`, … as in access logs; `%%` is a literal percent sign),
 * added per `append_action` (or the deprecated `append`). A value that formats to nothing is
 * skipped unless `keep_empty_value`.
 */

export type AppendAction = 'APPEND_IF_EXISTS_OR_ADD' | 'ADD_IF_ABSENT' | 'OVERWRITE_IF_EXISTS_OR_ADD' | 'OVERWRITE_IF_EXISTS';

export interface HeaderToAdd {
  name: string;
  value: LogFormatter;
  action: AppendAction;
  keepEmpty: boolean;
}

export type MutableHeaders = Record<string, string | string[] | number | undefined>;

/** A header value's format: `%%` is a literal `%`; everything else is the access-log formatter's. */
export function compileHeaderValue(value: string): LogFormatter {
  const parts = value.split('%%').map((part) => compileTextFormat(part, true));
  if (parts.length === 1) return parts[0]!;
  if (parts.every((p) => p.constant !== undefined)) return constantFormat(parts.map((p) => p.constant).join('%'));
  return { format: (e) => parts.map((p) => p.format(e)).join('%') };
}

export function compileHeadersToAdd(options: unknown): HeaderToAdd[] {
  return list(options).map((o) => {
    const header = obj(o.header);
    const raw = typeof header.raw_value === 'string' ? Buffer.from(header.raw_value, 'base64').toString('latin1') : undefined;
    const action = (typeof o.append_action === 'string' ? o.append_action : o.append === false ? 'OVERWRITE_IF_EXISTS_OR_ADD' : 'APPEND_IF_EXISTS_OR_ADD') as AppendAction;
    return { name: String(header.key).toLowerCase(), value: compileHeaderValue(raw ?? String(header.value ?? '')), action, keepEmpty: o.keep_empty_value === true };
  });
}

export function applyHeadersToAdd(headers: MutableHeaders, options: readonly HeaderToAdd[], entry: AccessLogEntry | undefined): void {
  for (const h of options) {
    const value = h.value.constant ?? h.value.format(entryOf(entry));
    if (value === '' && !h.keepEmpty) continue;
    const present = headers[h.name] !== undefined;
    switch (h.action) {
      case 'ADD_IF_ABSENT':
        if (!present) headers[h.name] = value;
        break;
      case 'OVERWRITE_IF_EXISTS':
        if (present) headers[h.name] = value;
        break;
      case 'OVERWRITE_IF_EXISTS_OR_ADD':
        headers[h.name] = value;
        break;
      default:
        appendHeaderValue(headers, h.name, value);
    }
  }
}

/** Adds a value to a header (lower-case name): its first, or one more after those it has. */
export function appendHeaderValue(headers: MutableHeaders, name: string, value: string): void {
  const current = headers[name];
  headers[name] = current === undefined ? value : [...(Array.isArray(current) ? current : [String(current)]), value];
}

/** Validation: the errors of a headers_to_add list, each naming its entry. */
export function checkHeadersToAdd(options: unknown, path: string, errors: ConfigError[]): void {
  list(options).forEach((o, i) => {
    const value = obj(o.header).value;
    if (typeof value !== 'string') return;
    try {
      compileHeaderValue(value);
    } catch (err) {
      errors.push(configError('invalid', `${path}[${i}].header.value`, `${(err as Error).message}`));
    }
  });
}

/** One level's mutations (a route, its virtual host, its route configuration): removals, then additions. */
export interface HeaderMutationLevel {
  remove: string[];
  add: HeaderToAdd[];
}

/** The request and response mutations of a route, its levels in the order they apply. */
export interface HeaderMutations {
  request: HeaderMutationLevel[];
  response: HeaderMutationLevel[];
  /**
   * The request's values read the request (an operator such as `%REQ(x)%`, `%DOWNSTREAM_REMOTE_ADDRESS%`),
   * or there are response mutations, which do: without, no entry is made for a request that has no
   * access log (static values, the common case, cost a header set and nothing more).
   */
  readsEntry: boolean;
}

function level(config: JsonObject, direction: 'request' | 'response'): HeaderMutationLevel | undefined {
  const remove = ((config[`${direction}_headers_to_remove`] as string[] | undefined) ?? []).map((h) => h.toLowerCase());
  const add = compileHeadersToAdd(config[`${direction}_headers_to_add`]);
  return remove.length || add.length ? { remove, add } : undefined;
}

/**
 * A route's header mutations from its three levels. By default the most specific applies first
 * (route, virtual host, route configuration), so that the configuration's overwrite the others;
 * with most_specific_header_mutations_wins, the other way round. Undefined when there are none.
 */
export function compileHeaderMutations(route: JsonObject, vhost: JsonObject, routeConfig: JsonObject): HeaderMutations | undefined {
  const scopes = routeConfig.most_specific_header_mutations_wins === true ? [routeConfig, vhost, route] : [route, vhost, routeConfig];
  const request = scopes.map((c) => level(c, 'request')).filter((l): l is HeaderMutationLevel => l !== undefined);
  const response = scopes.map((c) => level(c, 'response')).filter((l): l is HeaderMutationLevel => l !== undefined);
  if (!request.length && !response.length) return undefined;
  const readsEntry = response.length > 0 || request.some((l) => l.add.some((h) => h.value.constant === undefined));
  return { request, response, readsEntry };
}

/** The entry a value with operators reads; only HeaderMutations without `readsEntry` are applied without one. */
function entryOf(entry: AccessLogEntry | undefined): AccessLogEntry {
  if (entry === undefined) throw new Error('a header value with operators was formatted without the request it reads');
  return entry;
}

/** Applies levels to a header object: at each, its removals, then its additions (`entry` may be left out when they do not read it: `readsEntry`). */
export function applyHeaderMutations(headers: MutableHeaders, levels: readonly HeaderMutationLevel[], entry: AccessLogEntry | undefined): void {
  for (const l of levels) {
    for (const name of l.remove) delete headers[name];
    applyHeadersToAdd(headers, l.add, entry);
  }
}
