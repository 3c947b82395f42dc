import { checkAccessLogs } from '../../../../access-log/loggers.js';
import { checkHeadersToAdd } from '../../../../header-mutation.js';
import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';
import type { ConfigReferences } from '../../../descriptor.js';

/**
 * A TCP proxy's configuration, as Envoy's TcpProxy config checks it: a cluster or weighted
 * clusters that exist (a listener from LDS may name one that is yet to come), its access logs, and
 * its tunnel's POST path.
 */
export function checkTcpProxy(config: JsonObject, path: string, refs: ConfigReferences, errors: ConfigError[]): void {
  const known = (name: string) => refs.dynamic || refs.clusters.has(name);
  if (typeof config.cluster === 'string' && !known(config.cluster)) errors.push(configError('unknown_reference', `${path}.cluster`, `unknown cluster '${config.cluster}'`));
  list(obj(config.weighted_clusters).clusters).forEach((wc, k) => {
    if (!known(String(wc.name))) errors.push(configError('unknown_reference', `${path}.weighted_clusters.clusters[${k}].name`, `unknown cluster '${String(wc.name)}'`));
  });
  if (config.cluster === undefined && config.weighted_clusters === undefined) errors.push(configError('missing', path, 'tcp_proxy needs cluster or weighted_clusters'));
  checkAccessLogs(config.access_log, `${path}.access_log`, errors);
  if (config.tunneling_config === undefined) return;
  const t = obj(config.tunneling_config);
  const tPath = `${path}.tunneling_config`;
  const postPath = typeof t.post_path === 'string' ? t.post_path : '';
  if (postPath && t.use_post !== true) errors.push(configError('conflict', `${tPath}.post_path`, 'Can\'t set a post path when POST method isn\'t used'));
  else if (postPath && !postPath.startsWith('/')) errors.push(configError('invalid', `${tPath}.post_path`, 'Path must start with \'/\''));
  checkHeadersToAdd(t.headers_to_add, `${tPath}.headers_to_add`, errors);
  if (typeof config.max_connect_attempts === 'number' && config.max_connect_attempts > 1) {
    errors.push(configError('unsupported', `${path}.max_connect_attempts`, 'more than one attempt with tunneling_config is not supported by this proxy (a tunnel is one HTTP request, not retried)'));
  }
}
