import { semanticVersion } from '../../shared/version.js';
import { obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { JSON_TYPE, protoJson, TEXT, type AdminEndpoint } from '../endpoint.js';
import { helpText } from '../help.js';
import { homePage } from '../render/home-page.js';
import type { AdminState } from '../state.js';

/** Server lifecycle and information: /, /help, /ready, /server_info, /quitquitquit. */

const seconds = (ms: number) => `${Math.max(0, Math.floor(ms / 1000))}s`;

/**
 * The effective node: the bootstrap's, with the agent's name, version and extensions. All-fields
 * form (what /server_info prints: empty scalars, lists and maps too), or defaults omitted (the
 * bootstrap in /config_dump).
 */
export function nodeInfo(state: AdminState, allFields = true): JsonObject {
  const node = obj(state.server.bootstrap.node);
  const agent = { user_agent_name: 'envoy', user_agent_build_version: { version: semanticVersion() }, extensions: state.info.extensions };
  if (!allFields) return { ...node, ...agent };
  return {
    id: node.id ?? '',
    cluster: node.cluster ?? '',
    ...(node.metadata !== undefined ? { metadata: node.metadata } : {}),
    dynamic_parameters: node.dynamic_parameters ?? {},
    ...(node.locality !== undefined ? { locality: node.locality } : {}),
    ...agent,
    client_features: node.client_features ?? [],
    listening_addresses: node.listening_addresses ?? [],
  };
}

export function serverEndpoints(state: AdminState, all: () => AdminEndpoint[]): AdminEndpoint[] {
  return [
    { path: '/', help: 'Admin home page', mutates: false, handle: () => ({ status: 200, body: homePage(all()), contentType: 'text/html; charset=UTF-8' }) },
    { path: '/help', help: 'print out list of admin commands', mutates: false, handle: () => ({ status: 200, body: helpText(all()) }) },
    {
      path: '/ready',
      help: 'print server state, return 200 if LIVE, otherwise return 503',
      mutates: false,
      handle: () => ({ status: state.reportedState === 'LIVE' ? 200 : 503, body: `${state.reportedState}\n`, contentType: TEXT }),
    },
    {
      path: '/server_info',
      help: 'print server version/status information',
      mutates: false,
      handle: () => {
        const now = Date.now();
        return {
          status: 200,
          contentType: JSON_TYPE,
          body: protoJson({
            version: state.info.version,
            state: state.reportedState,
            uptime_current_epoch: seconds(now - state.server.startTimeMs),
            uptime_all_epochs: seconds(now - state.server.originalStartTimeMs),
            hot_restart_version: state.info.hotRestartVersion,
            command_line_options: state.info.commandLineOptions,
            node: nodeInfo(state),
          }),
        };
      },
    },
    {
      path: '/quitquitquit',
      help: 'exit the server',
      mutates: true,
      handle: () => ({ status: 200, body: 'OK\n', after: () => state.notify({ type: 'quit' }) }),
    },
  ];
}
