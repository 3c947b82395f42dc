import { checkAccessLogs } from '../../access-log/loggers.js';
import { list, obj } from '../access.js';
import { chainMatchOf, cidrOf, matchKeys } from '../../chain-match.js';
import { addressText, checkLiteralAddress, filterExtension, type Obj } from './common.js';
import { checkHttpConnectionManager } from './connection-manager.js';
import { configError, type ConfigError } from '../config-error.js';
import type { Listener } from '../envoy-types.js';
import { isListenerFilter, isNetworkFilter, isUdpListenerFilter } from '../../extensions/descriptor.js';
import { EXTENSIONS } from '../../extensions/registry.js';

/** Listeners' semantic checks (static or from LDS): names, addresses, filter chains and their matches, UDP listeners. */

export function checkListeners(listeners: Obj[], clusters: Set<string>, errors: ConfigError[]): void {
  const names = new Map<string, number>();
  const addresses = new Map<string, number>();
  listeners.forEach((l, i) => {
    const path = `static_resources.listeners[${i}]`;
    if (typeof l.name === 'string') {
      if (names.has(l.name)) errors.push(configError('duplicate', `${path}.name`, `duplicate listener name '${l.name}' (also listeners[${names.get(l.name)}])`));
      names.set(l.name, i);
    }
    const key = sharedAddressKey(l);
    if (key !== undefined) {
      if (addresses.has(key)) errors.push(configError('duplicate', `${path}.address`, `listener address '${key}' is already used by listeners[${addresses.get(key)}]`));
      addresses.set(key, i);
    }
    checkListener(l, path, clusters, errors);
  });
}

/**
 * The address two listeners may not share, as text (`127.0.0.1:80`, `unix:/path`); none for
 * port 0, which asks the kernel for a free port (two of them never clash).
 */
export function sharedAddressKey(l: Listener): string | undefined {
  if (l.address === undefined) return undefined;
  const sa = obj(obj(l.address).socket_address);
  if (Number(sa.port_value ?? 0) === 0 && !obj(l.address).pipe) return undefined;
  // A UDP port is not a TCP port: a TCP and a UDP listener may share a number.
  return sa.protocol === 'UDP' ? `udp:${addressText(obj(l.address))}` : addressText(obj(l.address));
}

/**
 * One listener alone (a bootstrap's, or one from the listener discovery service). A dynamic
 * listener's TCP proxy may name a cluster that is not there yet (Envoy closes such connections
 * until it is); an inline route_config validates its clusters either way, as Envoy's does.
 */
/** A listener on a UDP address (socket_address.protocol: UDP). */
export function isUdpListener(l: Listener): boolean {
  return obj(obj(l.address).socket_address).protocol === 'UDP';
}

const UDP_PROXY = 'envoy.filters.udp_listener.udp_proxy';

/**
 * A UDP listener: no filter chains (Envoy's are for QUIC), one `udp_proxy` listener filter, and
 * that filter's route: `cluster`, or a `matcher` whose on_no_match action is a Route.
 */
function checkUdpListener(l: Obj, path: string, clusters: Set<string>, errors: ConfigError[], dynamic: boolean): void {
  if (list(l.filter_chains).length > 0 || l.default_filter_chain !== undefined) errors.push(configError('unsupported', `${path}.filter_chains`, 'a UDP listener\'s filter chains are for QUIC, which Node 20 does not have; a UDP listener takes the udp_proxy listener filter'));
  const filters = list(l.listener_filters);
  filters.forEach((f, j) => {
    if (filterExtension(f)?.name !== UDP_PROXY) errors.push(configError('wrong_extension', `${path}.listener_filters[${j}]`, `a UDP listener takes only the listener filter ${UDP_PROXY}`));
  });
  if (filters.length !== 1) {
    errors.push(configError('missing', `${path}.listener_filters`, `a UDP listener needs exactly one ${UDP_PROXY} listener filter`));
    return;
  }
  const ext = filterExtension(filters[0]!);
  if (ext && isUdpListenerFilter(ext)) ext.validate(obj(filters[0]!.typed_config), `${path}.listener_filters[0].typed_config`, { clusters, dynamic }, errors);
}

export function checkListener(l: Obj, path: string, clusters: Set<string>, errors: ConfigError[], dynamic = false): void {
  if (l.address === undefined) errors.push(configError('missing', `${path}.address`, 'a listener needs an address'));
  else checkLiteralAddress(l.address, `${path}.address`, errors, true);
  list(l.additional_addresses).forEach((a, j) => {
    const aPath = `${path}.additional_addresses[${j}]`;
    if (isUdpListener(l) || obj(obj(a.address).socket_address).protocol === 'UDP') errors.push(configError('unsupported', aPath, 'additional addresses are for TCP listeners'));
    else if (a.address === undefined) errors.push(configError('missing', `${aPath}.address`, 'an additional address needs an address'));
    else checkLiteralAddress(a.address, `${aPath}.address`, errors);
  });
  checkAccessLogs(l.access_log, `${path}.access_log`, errors);
  if (isUdpListener(l)) {
    checkUdpListener(l, path, clusters, errors, dynamic);
    return;
  }
  if (l.udp_listener_config !== undefined) errors.push(configError('conflict', `${path}.udp_listener_config`, 'only for a listener whose address has protocol UDP'));
  if (list(l.filter_chains).length === 0 && l.default_filter_chain === undefined) errors.push(configError('missing', `${path}.filter_chains`, 'a listener needs at least one filter chain'));
  const matches = new Map<string, number>();
  list(l.filter_chains).forEach((c, j) => {
    const match = chainMatchOf(c);
    const fcm = obj(c.filter_chain_match);
    for (const field of ['prefix_ranges', 'direct_source_prefix_ranges', 'source_prefix_ranges']) {
      list(fcm[field]).forEach((r, k) => {
        const cidr = cidrOf(r);
        if (typeof cidr === 'string') errors.push(configError('invalid', `${path}.filter_chains[${j}].filter_chain_match.${field}[${k}]`, cidr));
      });
    }
    const keys = matchKeys(match);
    const other = keys.map((k) => matches.get(k)).find((o) => o !== undefined);
    if (other !== undefined) {
      errors.push(configError('duplicate', `${path}.filter_chains[${j}]`, `error adding listener '${String(l.name ?? '')}': multiple filter chains with the same matching rules are defined (also filter_chains[${other}])`));
    }
    for (const k of keys) if (!matches.has(k)) matches.set(k, j);
    if (match.transportProtocol !== undefined && match.transportProtocol !== 'tls' && match.transportProtocol !== 'raw_buffer') {
      errors.push(configError('invalid', `${path}.filter_chains[${j}].filter_chain_match.transport_protocol`, `'${match.transportProtocol}' is neither 'tls' nor 'raw_buffer'`));
    }
  });
  list(l.listener_filters).forEach((f, j) => {
    const ext = filterExtension(f);
    if (ext?.name === UDP_PROXY) errors.push(configError('wrong_extension', `${path}.listener_filters[${j}]`, `${UDP_PROXY} is for a listener whose address has protocol UDP`));
    else if (!ext || !isListenerFilter(ext)) {
      errors.push(configError('unsupported_extension', `${path}.listener_filters[${j}]`, `listener filter '${String(f.name ?? '')}' is not supported by this proxy (only ${EXTENSIONS.filter(isListenerFilter).map((e) => e.name).join(', ')}, and udp_proxy on UDP listeners)`));
    } else ext.validate?.(obj(f.typed_config), `${path}.listener_filters[${j}].typed_config`, errors);
  });
  const chains: [Obj, string][] = list(l.filter_chains).map((c, j) => [c, `${path}.filter_chains[${j}]`]);
  if (l.default_filter_chain !== undefined) chains.push([obj(l.default_filter_chain), `${path}.default_filter_chain`]);
  for (const [chain, cPath] of chains) {
    const filters = list(chain.filters);
    if (filters.length === 0) errors.push(configError('conflict', `${cPath}.filters`, 'a filter chain needs a terminal network filter'));
    filters.forEach((f, j) => {
      const fPath = `${cPath}.filters[${j}]`;
      const ext = filterExtension(f);
      if (!ext) {
        if (f.typed_config === undefined) errors.push(configError('unsupported_extension', fPath, `unknown network filter '${String(f.name)}' (no typed_config, and no implemented filter has that name)`));
        return;
      }
      if (!isNetworkFilter(ext)) errors.push(configError('wrong_extension', fPath, `'${ext.name}' is not a network filter`));
      if (j !== filters.length - 1) errors.push(configError('conflict', fPath, `'${ext.name}' is a terminal filter but is not the last filter in the chain`));
      const config = obj(f.typed_config);
      if (ext.name === 'envoy.filters.network.http_connection_manager') checkHttpConnectionManager(config, `${fPath}.typed_config`, clusters, errors);
      if (isNetworkFilter(ext)) ext.validate?.(config, `${fPath}.typed_config`, { clusters, dynamic }, errors);
    });
  }
}
