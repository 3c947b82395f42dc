import type { ExtensionDescriptor } from '../../descriptor.js';

const DOWNSTREAM_CONNECTIONS = 'envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig';

/**
 * Envoy's proactive downstream-connections monitor (named
 * envoy.resource_monitors.global_downstream_max_connections): every listener's open connections,
 * in every worker, tried against max_active_downstream_connections as each is accepted
 * (worker/listeners.ts); one past it is closed and counted in `downstream_global_cx_overflow`.
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.resource_monitors.global_downstream_max_connections',
    category: 'envoy.resource_monitors',
    typeName: DOWNSTREAM_CONNECTIONS,
    description: 'every listener\'s open connections, in every worker, at most max_active_downstream_connections',
    deprecatedNames: [],
    fields: { [DOWNSTREAM_CONNECTIONS]: ['max_active_downstream_connections'] },
  },
];
