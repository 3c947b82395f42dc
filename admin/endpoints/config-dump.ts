import { addressJson } from '../../shared/address.js';
import { list, obj } from '../../shared/config/access.js';
import type protobuf from 'protobufjs';
import { re2 } from '../../shared/re2.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { filterChainsOf, type ListenerResource } from '../../shared/config/resources.js';
import { HOSTS_READOUT_PREFIX } from '../../shared/stats/scopes.js';
import { hostHealthStatus, type UpstreamHost } from '../../shared/upstream/hosts.js';
import { JSON_TYPE, protoJsonChunks, type AdminEndpoint, type AdminResponse } from '../endpoint.js';
import type { StatsCollector } from '../stats-collector.js';
import type { AdminState } from '../state.js';
import { nodeInfo } from './server.js';

/**
 * /config_dump: the configuration in force as envoy.admin.v3.ConfigDump, one dump per config
 * tracker in Envoy's key order (bootstrap, clusters, endpoint with include_eds, listeners,
 * route_scopes, routes, secrets), with `name_regex` (RE2 full match), `resource`, `mask` and their
 * errors as Envoy words them. Configuration is already in normalised proto JSON, so defaults
 * are omitted as Envoy omits them. Sensitive fields are printed as `[redacted]`.
 */

const ADMIN = 'type.googleapis.com/envoy.admin.v3.';
const PLAIN = 'text/plain';

/**
 * Fields Envoy marks `(udpa.annotations.sensitive)`: TLS private keys and passwords everywhere, and
 * a session ticket key list's keys and a generic secret's value(s) below their messages. Every
 * string below them is redacted: text as `[redacted]`, bytes as the bytes of it (base64 in JSON).
 */
const SENSITIVE = new Set(['private_key', 'password', 'pkcs12']);
const SENSITIVE_WITHIN: Readonly<Record<string, readonly string[]>> = { session_ticket_keys: ['keys'], generic_secret: ['secret', 'secrets'] };
const REDACTED = '[redacted]';
const REDACTED_BYTES = Buffer.from(REDACTED).toString('base64');

/** As redact() does to a whole dump, for JSON.stringify and jsonChunks: only the sensitive subtrees are copied. */
export function redactingReplacer(key: string, value: unknown): unknown {
  return SENSITIVE.has(key) ? redact(value, true) : SENSITIVE_WITHIN[key] ? redact(value, false, key) : value;
}

export function redact(value: unknown, inside = false, parent = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => redact(v, inside, parent));
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '@type') out[k] = v;
      else if (inside && k === 'inline_bytes' && typeof v === 'string') out[k] = REDACTED_BYTES;
      else out[k] = redact(v, inside || SENSITIVE.has(k) || SENSITIVE_WITHIN[parent]?.includes(k) === true, k);
    }
    return out;
  }
  return inside && typeof value === 'string' ? REDACTED : value;
}

const SECRET_TYPE_URL = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';

/**
 * envoy.admin.v3.SecretsConfigDump: the bootstrap's secrets as configured, and each from SDS as
 * it stands (its files read in: inline bytes), or warming (`uninitialized`) until it comes.
 */
function secretsDump(state: AdminState, keep: (name: string) => boolean): JsonObject {
  const { secrets } = state.server;
  const at = (ms: number) => new Date(ms).toISOString();
  const staticSecrets = secrets.static.filter((s) => keep(s.name)).map((s) => ({ name: s.name, secret: { '@type': SECRET_TYPE_URL, ...s.secret } }));
  const active = secrets.active.filter((s) => keep(s.name)).map((s) => ({ name: s.name, version_info: s.versionInfo, last_updated: at(s.lastUpdatedMs), secret: { '@type': SECRET_TYPE_URL, ...s.secret } }));
  const warming = secrets.warming.filter((s) => keep(s.name)).map((s) => ({ name: s.name, version_info: 'uninitialized', last_updated: at(s.lastUpdatedMs), secret: { '@type': SECRET_TYPE_URL, name: s.name } }));
  return {
    '@type': `${ADMIN}SecretsConfigDump`,
    ...(staticSecrets.length ? { static_secrets: staticSecrets } : {}),
    ...(active.length ? { dynamic_active_secrets: active } : {}),
    ...(warming.length ? { dynamic_warming_secrets: warming } : {}),
  };
}

const LISTENER_TYPE_URL = 'type.googleapis.com/envoy.config.listener.v3.Listener';

/**
 * envoy.admin.v3.ListenersConfigDump: bootstrap listeners as static_listeners; each listener of
 * the listener discovery service under its name with its active_state, its warming_state while a
 * new version waits for its route tables, its draining_state while an earlier version drains,
 * and error_state while its last update stands refused.
 */
function listenersDump(state: AdminState, keep: (name: string) => boolean): JsonObject {
  const server = state.server;
  const at = (ms: number) => new Date(ms).toISOString();
  const stateOf = (l: ListenerResource) => ({ version_info: l.versionInfo ?? '', listener: { '@type': LISTENER_TYPE_URL, ...l.config }, last_updated: at(l.lastUpdatedMs) });
  const staticListeners = server.listeners.filter((l) => !l.addedViaApi && keep(l.name)).map((l) => ({ listener: { '@type': LISTENER_TYPE_URL, ...l.config }, last_updated: at(l.lastUpdatedMs) }));
  const dynamic = new Map<string, JsonObject>();
  const entry = (name: string) => dynamic.get(name) ?? dynamic.set(name, { name }).get(name)!;
  for (const l of server.listeners) if (l.addedViaApi && keep(l.name)) entry(l.name).active_state = stateOf(l);
  for (const l of server.warmingListeners) if (keep(l.name)) entry(l.name).warming_state = stateOf(l);
  for (const d of server.drainingListeners) if (keep(d.resource.name)) entry(d.resource.name).draining_state = stateOf(d.resource);
  for (const f of server.listenerFailures) {
    if (!keep(f.name)) continue;
    entry(f.name).error_state = { failed_configuration: { '@type': LISTENER_TYPE_URL, ...f.failedConfiguration }, last_update_attempt: at(f.lastUpdateAttemptMs), details: f.details };
  }
  return {
    '@type': `${ADMIN}ListenersConfigDump`,
    ...(server.ldsVersionInfo ? { version_info: server.ldsVersionInfo } : {}),
    ...(staticListeners.length ? { static_listeners: staticListeners } : {}),
    ...(dynamic.size ? { dynamic_listeners: [...dynamic.values()] } : {}),
  };
}

export function configDumpEndpoints(state: AdminState, collector: StatsCollector): AdminEndpoint[] {
  const lastUpdated = new Date(state.server.startTimeMs).toISOString();
  const bootstrap = state.server.bootstrap;

  /** [tracker key, dump] in Envoy's order; `keep` filters resources by name. */
  const dumps = (includeEds: boolean, keep: (name: string) => boolean): [string, JsonObject][] => {
    const out: [string, JsonObject][] = [];
    const clusters = state.server.clusters.map((c) => c.config);
    // Inline route configurations are static ones in Envoy's dump, whichever way their listener came.
    const hcms = state.server.listeners
      .flatMap((l) => filterChainsOf(l.config).flatMap(([, c]) => list(c.filters).map((f) => obj(f.typed_config))))
      .filter((t) => String(t['@type'] ?? '').endsWith('.HttpConnectionManager'));
    out.push(['bootstrap', { '@type': `${ADMIN}BootstrapConfigDump`, bootstrap: { ...bootstrap, node: nodeInfo(state, false) }, last_updated: lastUpdated }]);
    const staticClusters = state.server.clusters
      .filter((c) => !c.addedViaApi && keep(c.name))
      .map((c) => ({ cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', ...c.config }, last_updated: new Date(c.lastUpdatedMs).toISOString() }));
    // A refused update shows as error_state: on the version still served, or alone when there is none.
    const failures = new Map(state.server.clusterFailures.map((f) => [f.name, f]));
    const errorState = (name: string) => {
      const f = failures.get(name);
      failures.delete(name);
      return f ? { error_state: { last_update_attempt: new Date(f.lastUpdateAttemptMs).toISOString(), details: f.details } } : {};
    };
    const dynamicClusters: JsonObject[] = state.server.clusters
      .filter((c) => c.addedViaApi && keep(c.name))
      .map((c) => ({ version_info: c.versionInfo ?? '', cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', ...c.config }, last_updated: new Date(c.lastUpdatedMs).toISOString(), ...errorState(c.name) }));
    for (const f of failures.values()) if (keep(f.name)) dynamicClusters.push({ version_info: f.versionInfo, ...errorState(f.name) });
    const warmingClusters = state.server.warmingClusters
      .filter((c) => keep(c.name))
      .map((c) => ({ version_info: c.versionInfo ?? '', cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', ...c.config }, last_updated: new Date(c.lastUpdatedMs).toISOString() }));
    const cdsVersion = state.server.cdsVersionInfo;
    out.push([
      'clusters',
      {
        '@type': `${ADMIN}ClustersConfigDump`,
        ...(cdsVersion ? { version_info: cdsVersion } : {}),
        ...(staticClusters.length ? { static_clusters: staticClusters } : {}),
        ...(dynamicClusters.length ? { dynamic_active_clusters: dynamicClusters } : {}),
        ...(warmingClusters.length ? { dynamic_warming_clusters: warmingClusters } : {}),
      },
    ]);
    if (includeEds && clusters.length) {
      const shown = clusters.filter((c) => keep(String(c.name)));
      const configs = shown.map((c) => {
        const readout = collector.merged.textReadouts.get(`${HOSTS_READOUT_PREFIX}${String(c.name)}`);
        const hosts = readout?.value ? (JSON.parse(readout.value) as UpstreamHost[]) : [];
        const byLocality = new Map<string, UpstreamHost[]>();
        for (const h of hosts) {
          const key = JSON.stringify([h.region, h.zone, h.subZone]);
          byLocality.set(key, [...(byLocality.get(key) ?? []), h]);
        }
        const endpoints = [...byLocality.values()].map((group) => {
          const h0 = group[0]!;
          const locality: JsonObject = {};
          if (h0.region) locality.region = h0.region;
          if (h0.zone) locality.zone = h0.zone;
          if (h0.subZone) locality.sub_zone = h0.subZone;
          return {
            locality,
            lb_endpoints: group.map((h) => ({
              endpoint: { address: addressJson(h.address), ...(h.displayHostname ? { hostname: h.displayHostname } : {}), health_check_config: {} },
              health_status: hostHealthStatus(h),
              metadata: {},
              load_balancing_weight: h.weight,
            })),
          };
        });
        return {
          endpoint_config: {
            '@type': 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
            cluster_name: String(c.name),
            ...(endpoints.length ? { endpoints } : {}),
            policy: { overprovisioning_factor: 140 },
          },
        };
      });
      // An EDS cluster's endpoints came by discovery (dynamic); the others' are configured (static).
      const staticConfigs = configs.filter((_, i) => shown[i]!.type !== 'EDS');
      const dynamicConfigs = configs.filter((_, i) => shown[i]!.type === 'EDS');
      out.push([
        'endpoint',
        {
          '@type': `${ADMIN}EndpointsConfigDump`,
          ...(staticConfigs.length ? { static_endpoint_configs: staticConfigs } : {}),
          ...(dynamicConfigs.length ? { dynamic_endpoint_configs: dynamicConfigs } : {}),
        },
      ]);
    }
    out.push(['listeners', listenersDump(state, keep)]);
    if (hcms.length) {
      out.push(['route_scopes', { '@type': `${ADMIN}ScopedRoutesConfigDump` }]);
      const routes = hcms
        .filter((h) => h.route_config !== undefined)
        .map((h) => obj(h.route_config))
        .filter((rc) => keep(String(rc.name ?? '')))
        .map((rc) => ({ route_config: { '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration', ...rc }, last_updated: lastUpdated }));
      const dynamicRoutes = Object.values(state.server.routes)
        .filter((r) => keep(r.name))
        .map((r) => ({ version_info: r.versionInfo, route_config: { '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration', ...r.config }, last_updated: new Date(r.lastUpdatedMs).toISOString() }));
      out.push([
        'routes',
        {
          '@type': `${ADMIN}RoutesConfigDump`,
          ...(routes.length ? { static_route_configs: routes } : {}),
          ...(dynamicRoutes.length ? { dynamic_route_configs: dynamicRoutes } : {}),
        },
      ]);
    }
    out.push(['secrets', secretsDump(state, keep)]);
    return out;
  };

  const fail = (status: number, body: string): AdminResponse => ({ status, contentType: PLAIN, body });

  return [
    {
      path: '/config_dump',
      help: 'dump current Envoy configs (experimental)',
      mutates: false,
      params: [
        { name: 'resource', help: 'The resource to dump' },
        { name: 'mask', help: 'The mask to apply. When both resource and mask are specified, the mask is applied to every element in the desired repeated field so that only a subset of fields are returned. The mask is parsed as a Protobuf::FieldMask' },
        { name: 'name_regex', help: 'Dump only the currently loaded configurations whose names match the specified regex. Can be used with both resource and mask query parameters.' },
        { name: 'include_eds', help: 'Dump currently loaded configuration including EDS. See the response definition for more information' },
      ],
      handle: async (rq) => {
        const param = (name: string) => (rq.query.get(name) || undefined);
        let keep: (name: string) => boolean = () => true;
        const nameRegex = param('name_regex');
        if (nameRegex !== undefined) {
          try {
            const re = re2().compile(nameRegex);
            keep = (name) => re.matches(name);
          } catch (err) {
            return fail(400, `INVALID_ARGUMENT: Error while parsing name_regex from ${nameRegex}: ${(err as Error).message}`);
          }
        }
        const includeEds = rq.query.has('include_eds');
        if (includeEds) await collector.refresh();
        const maskText = param('mask');
        const resource = param('resource');
        if (resource === undefined && !maskText) {
          // The whole dump, written as the client takes it, redacted on the way.
          return { status: 200, contentType: JSON_TYPE, body: protoJsonChunks({ configs: dumps(includeEds, keep).map(([, dump]) => dump) }, redactingReplacer) };
        }
        // The API schema (protobufjs) and the field masks load with the first request that needs
        // them: the admin starts without them (9 MB of its memory).
        const [{ envoySchema }, { applyMask, FieldMaskError, maskDebugText, parseMask }] = await Promise.all([import('../../shared/config/schema.js'), import('../field-mask.js')]);
        const paths = maskText ? parseMask(maskText) : undefined;
        const root = envoySchema();
        const all = dumps(includeEds, keep).map(([key, dump]) => [key, redact(dump) as JsonObject] as const);

        if (resource !== undefined) {
          for (const [, dump] of all) {
            const type = root.lookupType(String(dump['@type']).slice('type.googleapis.com/'.length));
            const field = type.fields[resource];
            if (!field) continue;
            if (!field.repeated) return fail(400, `${resource} is not a repeated field. Use ?mask=${resource} to get only this field`);
            const elementType = field.resolvedType as protobuf.Type;
            const typeUrl = `type.googleapis.com/${elementType.fullName.slice(1)}`;
            const elements = list(dump[resource]);
            if (elements.length === 0) return { status: 200, contentType: JSON_TYPE, body: '{}\n' };
            try {
              const configs = elements.map((e) => ({ '@type': typeUrl, ...(paths ? applyMask(elementType, e, paths, true) : e) }));
              return { status: 200, contentType: JSON_TYPE, body: protoJsonChunks({ configs }) };
            } catch (err) {
              if (err instanceof FieldMaskError) return fail(400, `FieldMask ${maskDebugText(paths!)} could not be successfully used.`);
              throw err;
            }
          }
          return fail(404, `${resource} not found in config dump`);
        }

        // A mask over every dump (the dumps it cannot apply to are left out).
        const mask = paths!;
        const configs = all.flatMap(([, dump]) => {
          const type = root.lookupType(String(dump['@type']).slice('type.googleapis.com/'.length));
          const { '@type': typeUrl, ...fields } = dump;
          try {
            return [{ '@type': typeUrl, ...applyMask(type, fields, mask, false) }];
          } catch (err) {
            if (err instanceof FieldMaskError) return [];
            throw err;
          }
        });
        if (configs.length === 0) return fail(400, `FieldMask ${maskText} could not be successfully applied to any configs.`);
        return { status: 200, contentType: JSON_TYPE, body: protoJsonChunks({ configs }) };
      },
    },
  ];
}
