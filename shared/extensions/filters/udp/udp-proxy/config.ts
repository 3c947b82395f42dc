import { checkAccessLogs } from '../../../../access-log/loggers.js';
import { obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../../config/wkt.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';
import type { ConfigReferences } from '../../../descriptor.js';

export const UDP_ROUTE = 'envoy.extensions.filters.udp.udp_proxy.v3.Route';

/** The cluster a UDP proxy sends its sessions to: its `cluster`, or its matcher's on_no_match route. */
export function udpProxyCluster(config: JsonObject): string | undefined {
  if (typeof config.cluster === 'string' && config.cluster) return config.cluster;
  const action = obj(obj(obj(config.matcher).on_no_match).action);
  const typed = obj(action.typed_config);
  if (typeNameOfUrl(String(typed['@type'] ?? '')) !== UDP_ROUTE) return undefined;
  return typeof typed.cluster === 'string' && typed.cluster ? typed.cluster : undefined;
}

/** A UDP proxy's route (`cluster`, or a `matcher` whose on_no_match action is a Route) and its access logs. */
export function checkUdpProxy(config: JsonObject, path: string, refs: ConfigReferences, errors: ConfigError[]): void {
  const route = udpProxyCluster(config);
  if (config.cluster !== undefined && config.matcher !== undefined) errors.push(configError('conflict', path, 'give cluster or matcher, not both'));
  if (route === undefined) errors.push(configError('missing', path, `the UDP proxy needs cluster, or matcher.on_no_match.action with a ${UDP_ROUTE}`));
  else if (!refs.dynamic && !refs.clusters.has(route)) errors.push(configError('unknown_reference', path, `unknown cluster '${route}'`));
  checkAccessLogs(config.access_log, `${path}.access_log`, errors);
}
