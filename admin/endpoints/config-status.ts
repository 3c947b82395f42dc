import type { ListenerResource, UpdateFailure } from '../../shared/config/resources.js';
import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';
import type { AdminState } from '../state.js';

/**
 * /config_status (beyond Envoy, whose users ask for it): every resource from dynamic
 * configuration in one readable place — its type and name, the version it serves, when that came,
 * whether it serves, warms or drains, and its last refusal with why. Envoy spreads this over
 * /config_dump's error_state (listeners and clusters only), stats and logs; the field names follow
 * Envoy's client status (CSDS): version_info, last_updated, client_status (ACKED or NACKED), error_state.
 */

type State = 'active' | 'warming' | 'draining' | 'refused';

export interface ResourceStatus {
  type: 'cluster' | 'listener' | 'route_configuration';
  name: string;
  version_info?: string;
  last_updated?: string;
  state: State;
  /** NACKED while its last update stands refused (the version it serves, if any, is an earlier one). */
  client_status: 'ACKED' | 'NACKED';
  error_state?: { details: string; last_update_attempt: string; version_info: string };
}

const at = (ms: number) => new Date(ms).toISOString();

export function configStatus(state: AdminState): ResourceStatus[] {
  const server = state.server;
  const rows: ResourceStatus[] = [];
  const add = (type: ResourceStatus['type'], failures: UpdateFailure[], entries: [name: string, state: State, version: string | undefined, updatedMs: number][]) => {
    const failed = new Map(failures.map((f) => [f.name, f]));
    for (const [name, s, version, updatedMs] of entries) {
      const f = failed.get(name);
      rows.push({
        type,
        name,
        ...(version !== undefined ? { version_info: version } : {}),
        last_updated: at(updatedMs),
        state: s,
        client_status: f ? 'NACKED' : 'ACKED',
        ...(f ? { error_state: { details: f.details, last_update_attempt: at(f.lastUpdateAttemptMs), version_info: f.versionInfo } } : {}),
      });
    }
    // Refused and never accepted: nothing serves under that name.
    const shown = new Set(entries.map(([name]) => name));
    for (const f of failures) {
      if (shown.has(f.name)) continue;
      rows.push({ type, name: f.name, state: 'refused', client_status: 'NACKED', error_state: { details: f.details, last_update_attempt: at(f.lastUpdateAttemptMs), version_info: f.versionInfo } });
    }
  };
  const listener = (s: State) => (l: ListenerResource): [string, State, string | undefined, number] => [l.name, s, l.versionInfo, l.lastUpdatedMs];
  add('cluster', server.clusterFailures, [
    ...server.clusters.filter((c) => c.addedViaApi).map((c): [string, State, string | undefined, number] => [c.name, 'active', c.versionInfo, c.lastUpdatedMs]),
    ...server.warmingClusters.map((c): [string, State, string | undefined, number] => [c.name, 'warming', c.versionInfo, c.lastUpdatedMs]),
  ]);
  add('listener', server.listenerFailures, [
    ...server.listeners.filter((l) => l.addedViaApi && !l.stopped).map(listener('active')),
    ...server.warmingListeners.map(listener('warming')),
    ...server.drainingListeners.map((d) => listener('draining')(d.resource)),
  ]);
  add(
    'route_configuration',
    server.routeFailures,
    Object.values(server.routes).map((r): [string, State, string | undefined, number] => [r.name, 'active', r.versionInfo, r.lastUpdatedMs]),
  );
  return rows;
}

function textRow(r: ResourceStatus): string {
  const fields = [`${r.type} ${r.name}`, r.state, r.version_info !== undefined ? `version '${r.version_info}'` : 'no version', r.last_updated ? `since ${r.last_updated}` : ''];
  const refused = r.error_state ? `\n  refused version '${r.error_state.version_info}' at ${r.error_state.last_update_attempt}: ${r.error_state.details}` : '';
  return `${fields.filter(Boolean).join(', ')}${refused}\n`;
}

export function configStatusEndpoints(state: AdminState): AdminEndpoint[] {
  return [
    {
      path: '/config_status',
      help: 'print each dynamic resource (clusters, listeners, route configurations): version, state and last refusal',
      mutates: false,
      params: [{ name: 'format', help: 'File format to use', choices: ['text', 'json'] }],
      handle: (rq) => {
        const rows = configStatus(state);
        if (rq.query.get('format') === 'json') return { status: 200, contentType: JSON_TYPE, body: protoJson({ resources: rows }) };
        return { status: 200, body: rows.length ? rows.map(textRow).join('') : 'no dynamic resources\n' };
      },
    },
  ];
}
