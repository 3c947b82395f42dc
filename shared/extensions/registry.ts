import type { AnyUse } from '../config/proto-json.js';
import { addExtensionMessages } from '../config/extension-messages.js';
import { isHttpFilter, type ExtensionDescriptor, type HttpFilterDescriptor } from './descriptor.js';
import * as accessLoggerFolders from './access-loggers/index.js';
import * as httpFilterFolders from './filters/http/index.js';
import * as listenerFilterFolders from './filters/listener/index.js';
import * as networkFilterFolders from './filters/network/index.js';
import * as udpListenerFilterFolders from './filters/udp/index.js';
import * as transportSocketFolders from './transport-sockets/index.js';
import * as upstreamFolders from './upstreams/index.js';
import * as lbPolicyFolders from './load-balancing-policies/index.js';
import * as dnsResolverFolders from './network/dns-resolver/index.js';
import * as resourceMonitorFolders from './resource-monitors/index.js';
import * as originalIpFolders from './http/original-ip-detection/index.js';
import { POLICY_CONFIG_PATH } from './load-balancing-policies/lookup.js';
import * as statSinkFolders from './stat-sinks/index.js';
import * as tracerFolders from './tracers/index.js';
import { RETRY_EXTENSIONS } from './retry/lookup.js';
import { configError, type ConfigError } from '../config/config-error.js';
import { SCALE_TIMERS } from '../overload/config.js';

/**
 * Every extension this proxy implements, found by Envoy's names and v3 config types. A
 * `typed_config` of any other type is a validation error naming its type URL, so that a bootstrap
 * never loads with an extension that would silently do nothing.
 */
export type Extension = ExtensionDescriptor;

const FOLDERS = [
  networkFilterFolders,
  transportSocketFolders,
  udpListenerFilterFolders,
  httpFilterFolders,
  accessLoggerFolders,
  statSinkFolders,
  tracerFolders,
  listenerFilterFolders,
  upstreamFolders,
  lbPolicyFolders,
  dnsResolverFolders,
  resourceMonitorFolders,
  originalIpFolders,
];

export const EXTENSIONS: readonly ExtensionDescriptor[] = [...FOLDERS.flatMap((folders) => Object.values(folders).flat()), ...RETRY_EXTENSIONS];

for (const e of EXTENSIONS) addExtensionMessages(e.fields ?? {}, e.refusalReasons ?? {});

const byTypeName = new Map(EXTENSIONS.flatMap((e) => [[e.typeName, e] as const, ...(e.perRouteTypeName ? [[e.perRouteTypeName, e] as const] : [])]));
/** What extensions read from typed metadata, by message (typed_filter_metadata's Anys). */
const metadataTypes = new Set(EXTENSIONS.flatMap((e) => e.metadataTypeNames ?? []));
const IN_TYPED_METADATA = /\.typed_filter_metadata\[/;
/** Anys the core reads where they are, not extensions: reduce_timeouts' configuration (shared/overload/config.ts). */
const CORE_TYPES: readonly { typeName: string; path: RegExp }[] = [{ typeName: SCALE_TIMERS, path: /^overload_manager\.actions\[\d+\]\.typed_config$/ }];
/** typed_per_filter_config's wrapper (`disabled`, `is_optional`, and the filter's own `config`). */
const FILTER_CONFIG = 'envoy.config.route.v3.FilterConfig';
const byName = new Map(EXTENSIONS.flatMap((e) => [e.name, ...e.deprecatedNames].map((n) => [n, e] as const)));

export function extensionByName(name: string): Extension | undefined {
  return byName.get(name);
}

export function extensionByTypeName(typeName: string): Extension | undefined {
  return byTypeName.get(typeName);
}

/** `--disable-extensions` entries are `<category>/<name>`; Envoy only warns about bad ones. */
export function parseDisabledExtensions(list: string[], warn: (msg: string) => void): Set<Extension> {
  const disabled = new Set<Extension>();
  for (const entry of list) {
    const slash = entry.lastIndexOf('/');
    if (slash <= 0 || slash === entry.length - 1) {
      warn(`failed to disable invalid extension name '${entry}'`);
      continue;
    }
    const category = entry.slice(0, slash);
    const ext = byName.get(entry.slice(slash + 1));
    if (!ext || ext.category !== category) {
      warn(`failed to disable unknown extension '${entry}'`);
      continue;
    }
    disabled.add(ext);
  }
  return disabled;
}

/** Every `typed_config` (any `Any`) must name an implemented, enabled extension. */
export function checkAnyUses(anys: AnyUse[], disabled: Set<Extension>, errors: ConfigError[]): void {
  // A FilterConfig's `config`: empty, it enables its filter; Envoy does not read it when the
  // FilterConfig is `disabled`, nor refuse a type it does not know when it is `is_optional`.
  const filterConfigs = new Set<string>();
  const unread: string[] = [];
  for (const any of anys) {
    if (any.typeName !== FILTER_CONFIG) continue;
    filterConfigs.add(`${any.path}.config`);
    if (any.value.disabled === true || any.value.is_optional === true) unread.push(`${any.path}.config`);
  }
  for (const any of anys) {
    if (any.typeName === FILTER_CONFIG) continue; // its `config` is an Any of its own, checked as one
    if (any.typeUrl === '') {
      if (!filterConfigs.has(any.path)) errors.push(configError('unsupported_extension', any.path, "an empty Any (no @type) names no extension (only a route's FilterConfig.config may be empty: it enables the filter)"));
      continue;
    }
    if (unread.some((p) => any.path === p || any.path.startsWith(`${p}.`))) continue;
    const ext = byTypeName.get(any.typeName);
    if (!ext && metadataTypes.has(any.typeName) && IN_TYPED_METADATA.test(any.path)) continue;
    if (!ext && CORE_TYPES.some((t) => t.typeName === any.typeName && t.path.test(any.path))) continue;
    if (!ext) {
      // A load-balancing policy this proxy does not implement is passed over for the next (shared/extensions/load-balancing-policies/lookup.ts).
      if (POLICY_CONFIG_PATH.test(any.path)) continue;
      const why = any.known ? 'is not implemented by this proxy' : 'is not a type this proxy knows';
      errors.push(configError('unsupported_extension', any.path, `type URL '${any.typeUrl}' ${why} (implemented: ${[...new Set(EXTENSIONS.map((e) => e.name))].join(', ')})`));
    } else if (disabled.has(ext)) {
      errors.push(configError('disabled_extension', any.path, `extension '${ext.category}/${ext.name}' is disabled by --disable-extensions`));
    }
  }
}

/** The extensions as /server_info lists them in `node.extensions`. */
export function extensionsForNode(disabled: ReadonlySet<string> = new Set()): { name: string; category: string; type_urls: string[]; disabled: boolean }[] {
  return EXTENSIONS.map((e) => ({ name: e.name, category: e.category, type_urls: [e.typeName, ...(e.perRouteTypeName ? [e.perRouteTypeName] : [])], disabled: disabled.has(`${e.category}/${e.name}`) }));
}

const httpFilters = new Map<string, HttpFilterDescriptor>();
for (const e of EXTENSIONS) if (isHttpFilter(e)) for (const key of [e.typeName, ...(e.perRouteTypeName ? [e.perRouteTypeName] : [])]) httpFilters.set(key, e);

/** The HTTP filter in a folder of its own whose configuration, or per-route configuration, is of this type. */
export function httpFilterByTypeName(typeName: string): HttpFilterDescriptor | undefined {
  return httpFilters.get(typeName);
}
