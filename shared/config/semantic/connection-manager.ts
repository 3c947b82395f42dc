import { compileAccessLogFilter } from '../../access-log/filter.js';
import { compileSubstitutionFormat } from '../../access-log/format.js';
import { checkAccessLogs } from '../../access-log/loggers.js';
import { checkHeadersToAdd } from '../../header-mutation.js';
import { list, obj } from '../access.js';
import { typeNameOfUrl } from '../wkt.js';
import { isHttpFilter, isTerminalHttpFilter, isTracer } from '../../extensions/descriptor.js';
import { EXTENSIONS, extensionByTypeName } from '../../extensions/registry.js';
import { checkHttp2Options } from '../http2-options.js';
import { filterExtension, type Obj } from './common.js';
import { checkRouteConfig } from './routes.js';
import { checkOriginalIpDetection } from '../../extensions/http/original-ip-detection/lookup.js';
import { configError, ConfigFault, type ConfigError } from '../config-error.js';

/** An HTTP connection manager's semantic checks: its HTTP filters and their order, local replies, tracing providers, route source. */

export const HCM_TYPE_NAME = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/** local_reply_config: each mapper's filter, headers and body format must compile (the errors name the mapper). */
function checkLocalReplyConfig(config: Obj, path: string, errors: ConfigError[]): void {
  const format = (sfs: unknown, p: string) => {
    if (sfs === undefined) return;
    try {
      compileSubstitutionFormat(obj(sfs));
    } catch (err) {
      errors.push(configError(err instanceof ConfigFault ? err.code : 'invalid', p, (err as Error).message));
    }
  };
  list(config.mappers).forEach((m, i) => {
    const mPath = `${path}.mappers[${i}]`;
    try {
      compileAccessLogFilter(obj(m.filter));
    } catch (err) {
      errors.push(configError(err instanceof ConfigFault ? err.code : 'invalid', `${mPath}.filter`, (err as Error).message));
    }
    checkHeadersToAdd(m.headers_to_add, `${mPath}.headers_to_add`, errors);
    format(m.body_format_override, `${mPath}.body_format_override`);
  });
  format(config.body_format, `${path}.body_format`);
}

/** An HTTP filter list (http_filters, an upgrade's filters): known filters, valid configurations, a terminal filter (the router) last. */
function checkHttpFilters(filters: Obj[], path: string, errors: ConfigError[], chain = 'http'): void {
  filters.forEach((f, i) => {
    const ext = filterExtension(f);
    const fPath = `${path}[${i}]`;
    if (!ext) {
      if (f.typed_config === undefined) errors.push(configError('unsupported_extension', fPath, `unknown HTTP filter '${String(f.name)}' (no typed_config, and no implemented filter has that name)`));
      return;
    }
    if (ext.category !== 'envoy.filters.http') errors.push(configError('wrong_extension', fPath, `'${ext.name}' is not an HTTP filter`));
    if (isHttpFilter(ext)) ext.validate?.(obj(f.typed_config), `${fPath}.typed_config`, errors);
    // As Envoy's FilterChainHelper::processFilter: positional, before the filter's kind is known.
    if (f.disabled === true && i === filters.length - 1) errors.push(configError('conflict', `${fPath}.disabled`, `Error: the last (terminal) filter (${String(f.name ?? '')}) in the chain cannot be disabled by default.`));
    // As Envoy's FilterChainUtility::checkFinalFilter, in its words.
    const terminal = isTerminalHttpFilter(ext);
    const named = `named ${String(f.name ?? '')} of type ${ext.name}`;
    if (terminal && i !== filters.length - 1) errors.push(configError('conflict', fPath, `terminal filter ${named} must be the last filter in a ${chain} filter chain`));
    if (!terminal && i === filters.length - 1) errors.push(configError('conflict', fPath, `non-terminal filter ${named} is the last filter in a ${chain} filter chain`));
  });
}

export function checkHttpConnectionManager(hcm: Obj, path: string, clusters: Set<string>, errors: ConfigError[]): void {
  if (hcm.route_config !== undefined) checkRouteConfig(obj(hcm.route_config), `${path}.route_config`, clusters, errors);
  if (hcm.local_reply_config !== undefined) checkLocalReplyConfig(obj(hcm.local_reply_config), `${path}.local_reply_config`, errors);
  if (hcm.http2_protocol_options !== undefined) checkHttp2Options(hcm.http2_protocol_options, `${path}.http2_protocol_options`, errors);
  checkHttpFilters(list(hcm.http_filters), `${path}.http_filters`, errors);
  checkOriginalIpDetection(hcm, path, errors);
  // Envoy's own words; an HTTP connection manager here is always on a TCP listener (no QUIC in Node 20).
  if (hcm.codec_type === 'HTTP3') errors.push(configError('unsupported', `${path}.codec_type`, 'HTTP/3 codec configured on non-QUIC listener (HTTP/3 needs QUIC, which Node 20 does not have)'));
  const upgradeTypes = new Set<string>();
  list(hcm.upgrade_configs).forEach((u, i) => {
    const uPath = `${path}.upgrade_configs[${i}]`;
    const type = String(u.upgrade_type ?? '');
    if (upgradeTypes.has(type.toLowerCase())) errors.push(configError('duplicate', `${uPath}.upgrade_type`, `Error: multiple upgrade configs with the same name: '${type}'`));
    upgradeTypes.add(type.toLowerCase());
    if (type.toLowerCase() === 'connect-udp') errors.push(configError('unsupported', `${uPath}.upgrade_type`, 'CONNECT-UDP (RFC 9298) is not supported by this proxy'));
    if (u.filters !== undefined) checkHttpFilters(list(u.filters), `${uPath}.filters`, errors, 'http upgrade');
  });
  // An empty list is Envoy's too (no filter answers: a request waits for the stream idle timeout); the loader warns.
  checkAccessLogs(hcm.access_log, `${path}.access_log`, errors);
  const tracing = obj(hcm.tracing);
  if (tracing.provider !== undefined) checkTracingProvider(obj(tracing.provider), `${path}.tracing.provider`, clusters, errors);
}

/**
 * A tracer (a connection manager's tracing.provider, the bootstrap's tracing.http), checked by
 * its descriptor (shared/extensions/tracers/).
 */
export function checkTracingProvider(provider: Obj, path: string, clusters: Set<string>, errors: ConfigError[]): void {
  const config = obj(provider.typed_config);
  const type = typeNameOfUrl(String(config['@type'] ?? ''));
  const ext = type ? extensionByTypeName(type) : undefined;
  if (ext && isTracer(ext)) {
    ext.validate?.(config, `${path}.typed_config`, clusters, errors);
    return;
  }
  errors.push(configError('unsupported', path, `tracer '${String(provider.name ?? '')}' (${type || 'no typed_config'}) is not supported (${EXTENSIONS.filter(isTracer).map((e) => e.name).join(' and ')} are)`));
}
