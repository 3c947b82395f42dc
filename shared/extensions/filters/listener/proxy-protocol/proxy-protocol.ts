import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { configError, type ConfigError } from '../../../../config/config-error.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { InspectedSocket, ListenerFilter, ListenerFilterVerdict } from '../../../../network/listener-filter.js';
import { directRemoteOf, localOf, type ConnectionOrigin } from '../../../../network/connection-origin.js';
import { readProxyHeader, type ProxyVersion, type ReadOptions, type ReadResult, type Tlv } from '../../../../network/proxy-protocol.js';
import { sanitizeUtf8 } from '../../../../network/utf8.js';

/**
 * envoy.filters.listener.proxy_protocol: a connection from a proxy in front (a load balancer)
 * begins with a PROXY header, version 1 or 2; the filter reads it, takes it off the stream, and
 * the connection's remote and local addresses are from then on the ones it names (Envoy's
 * restored addresses: what access logs, x-forwarded-for, RBAC and filter chain matching see; the
 * direct remote address stays the peer's). Rules put TLV values in the connection's dynamic
 * metadata; pass_through_tlvs keeps TLVs for an upstream PROXY header. Counted as Envoy counts:
 * `proxy_proto.[<stat_prefix>.]not_found_{allowed,disallowed}`,
 * `proxy_proto.[<stat_prefix>.]versions.v1|v2.{found,disallowed,error}`, and the legacy
 * `downstream_cx_proxy_proto_error` (every error and every connection refused for having none).
 */

export const PROXY_PROTOCOL = 'envoy.filters.listener.proxy_protocol';
const METADATA_NAMESPACE = PROXY_PROTOCOL;

interface Versioned {
  found: Counter;
  disallowed: Counter;
  error: Counter;
}

interface FilterStats {
  legacyError: Counter;
  notFoundAllowed: Counter;
  notFoundDisallowed: Counter;
  v1: Versioned;
  v2: Versioned;
}

function statsOf(statPrefix: string): FilterStats {
  const root = statPrefix ? `proxy_proto.${statPrefix}.` : 'proxy_proto.';
  const versioned = (v: string): Versioned => ({
    found: stats.counter(`${root}versions.${v}.found`),
    disallowed: stats.counter(`${root}versions.${v}.disallowed`),
    error: stats.counter(`${root}versions.${v}.error`),
  });
  return {
    legacyError: stats.counter('downstream_cx_proxy_proto_error'),
    notFoundAllowed: stats.counter(`${root}not_found_allowed`),
    notFoundDisallowed: stats.counter(`${root}not_found_disallowed`),
    v1: versioned('v1'),
    v2: versioned('v2'),
  };
}

interface Settings {
  read: ReadOptions;
  /** TLV type → where its value goes in dynamic metadata. */
  rules: Map<number, { namespace: string; key: string }>;
  /** TLV types kept for an upstream PROXY header; 'all': every one. */
  passThrough: Set<number> | 'all';
}

const versionName = (v: unknown): 'V1' | 'V2' | undefined => (v === 'V1' || v === 0 ? 'V1' : v === 'V2' || v === 1 ? 'V2' : undefined);

/** pass_through_tlvs (here and on the upstream transport socket): none when unset. */
export function passThroughOf(config: unknown): Set<number> | 'all' {
  if (config === undefined) return new Set();
  const c = obj(config);
  if (c.match_type === undefined || c.match_type === 'INCLUDE_ALL' || c.match_type === 0) return 'all';
  return new Set(list(c.tlv_type as unknown).map((t) => Number(t) & 0xff));
}

function settingsOf(config: JsonObject): Settings {
  const disallowed = new Set(list(config.disallowed_versions as unknown).map(versionName));
  const rules = new Map<number, { namespace: string; key: string }>();
  for (const r of list(config.rules)) {
    const present = obj(r.on_tlv_present);
    rules.set(Number(r.tlv_type ?? 0) & 0xff, { namespace: typeof present.metadata_namespace === 'string' && present.metadata_namespace ? present.metadata_namespace : METADATA_NAMESPACE, key: String(present.key ?? '') });
  }
  return {
    read: { allowV1: !disallowed.has('V1'), allowV2: !disallowed.has('V2'), allowAbsent: config.allow_requests_without_proxy_protocol === true },
    rules,
    passThrough: passThroughOf(config.pass_through_tlvs),
  };
}

/** Envoy's configuration errors, in its words; and what this proxy does not do, by name. */
export function validateProxyProtocol(config: JsonObject, path: string, errors: ConfigError[]): void {
  const disallowed = new Set(list(config.disallowed_versions as unknown).map(versionName));
  if (disallowed.has('V1') && disallowed.has('V2')) errors.push(configError('invalid', `${path}.disallowed_versions`, 'Proxy Protocol filter is misconfigured: all proxy protocol versions are disallowed.'));
  if (config.tlv_location === 'FILTER_STATE' || config.tlv_location === 1) {
    errors.push(configError('unsupported', `${path}.tlv_location`, 'FILTER_STATE is not supported by this proxy: nothing here reads filter state; TLVs go to dynamic metadata (DYNAMIC_METADATA, the default)'));
  }
}

function metadataOf(tlvs: readonly Tlv[], rules: Settings['rules']): ConnectionOrigin['metadata'] {
  if (rules.size === 0) return undefined;
  let metadata: Record<string, Record<string, string>> | undefined;
  for (const t of tlvs) {
    const rule = rules.get(t.type);
    if (!rule) continue;
    metadata ??= {};
    const fields = (metadata[rule.namespace] ??= {});
    // As Envoy's: a type that comes twice keeps its first value.
    if (!(rule.key in fields)) fields[rule.key] = sanitizeUtf8(t.value);
  }
  return metadata;
}

class ProxyProtocolFilter implements ListenerFilter {
  constructor(
    private readonly s: Settings,
    private readonly counters: FilterStats,
  ) {}

  onData(data: Buffer, socket: InspectedSocket): ListenerFilterVerdict | undefined {
    const r = readProxyHeader(data, this.s.read);
    if (r.state === 'more') return undefined;
    this.count(r);
    if (r.state === 'absent') return {};
    if (r.state !== 'done') return { close: true };
    const kept = this.s.passThrough === 'all' ? r.tlvs : r.tlvs.filter((t) => (this.s.passThrough as Set<number>).has(t.type));
    const origin: ConnectionOrigin = r.local
      ? { remote: directRemoteOf(socket), local: localOf(socket), restored: false, tlvs: [], metadata: undefined }
      : { remote: r.source!, local: r.destination!, restored: true, tlvs: kept, metadata: metadataOf(r.tlvs, this.s.rules) };
    return { consumed: r.length, origin };
  }

  private count(r: Exclude<ReadResult, { state: 'more' }>): void {
    const c = this.counters;
    const version: ProxyVersion | undefined = r.state === 'absent' ? undefined : r.version;
    if (version === undefined) {
      if (r.state === 'absent') c.notFoundAllowed.inc();
      else c.notFoundDisallowed.inc();
    } else {
      const v = c[version];
      if (r.state === 'done') v.found.inc();
      else if (r.state === 'denied') {
        v.found.inc();
        v.disallowed.inc();
      } else v.error.inc();
    }
    if (r.state === 'error') c.legacyError.inc();
  }
}

/** A listener's filter: its figures exist from the listener's start, as Envoy's do. */
export function proxyProtocol(config: JsonObject): () => ListenerFilter {
  const s = settingsOf(config);
  const counters = statsOf(typeof config.stat_prefix === 'string' ? config.stat_prefix : '');
  return () => new ProxyProtocolFilter(s, counters);
}
