import { list, obj } from '../../../config/access.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import { configError, type ConfigError } from '../../../config/config-error.js';
import { stats } from '../../../stats/process.js';
import type { Counter } from '../../../stats/store.js';
import type { ConnectionOrigin, Endpoint } from '../../../network/connection-origin.js';
import { proxyV1Header, proxyV2Header, proxyV2LocalHeader, type Tlv } from '../../../network/proxy-protocol.js';
import { passThroughOf } from '../../filters/listener/proxy-protocol/proxy-protocol.js';

/**
 * envoy.transport_sockets.upstream_proxy_protocol: a cluster's connections begin with a PROXY
 * header before anything of the wrapped transport socket (TLS's ClientHello, or plaintext). It
 * names the downstream connection's client and the address it connected to (Envoy's
 * ProxyProtocolFilterState, which the connection manager and the TCP proxy set from the downstream
 * connection: a PROXY header's addresses when the listener read one); with no downstream (a health
 * check), version 1 names the connection's own addresses and version 2 sends LOCAL. Version 2
 * carries the downstream's TLVs that pass_through_tlvs keeps, then added_tlvs (which win on a type
 * both have). Connections from different downstream origins are never shared (Envoy keys its pools
 * by these options).
 */

export const UPSTREAM_PROXY_PROTOCOL = 'envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport';

/** The PROXY wrapper of a transport socket, and the socket it wraps; undefined when it is not one. */
export function proxyProtocolWrapper(transportSocket: unknown): { inner: JsonObject; config: JsonObject } | undefined {
  const typed = obj(obj(transportSocket).typed_config);
  if (typeof typed['@type'] !== 'string' || typeNameOfUrl(typed['@type']) !== UPSTREAM_PROXY_PROTOCOL) return undefined;
  return { inner: obj(typed.transport_socket), config: typed };
}

/** The transport socket under any PROXY wrapper (what TLS or plaintext the connection speaks). */
export function innerTransportSocket(transportSocket: unknown): unknown {
  return proxyProtocolWrapper(transportSocket)?.inner ?? transportSocket;
}

/** Envoy's checks, and what this proxy does not do, by name. `path`: the transport socket's. */
export function validateUpstreamProxyProtocol(transportSocket: unknown, path: string, errors: ConfigError[]): void {
  const w = proxyProtocolWrapper(transportSocket);
  if (!w) return;
  const at = `${path}.typed_config`;
  if (proxyProtocolWrapper(w.inner)) errors.push(configError('unsupported', `${at}.transport_socket`, 'a PROXY protocol transport socket cannot wrap another'));
  list(obj(w.config.config).added_tlvs).forEach((t, i) => {
    const tPath = `${at}.config.added_tlvs[${i}]`;
    if (t.format_string !== undefined) errors.push(configError('unsupported', `${tPath}.format_string`, 'TLVs from a format string are not supported by this proxy: give the value'));
    else if (t.value === undefined || t.value === '') errors.push(configError('invalid', `${tPath}.value`, 'a TLV needs a value'));
  });
}

/** Where an endpoint's own TLVs are (LbEndpoint.metadata.typed_filter_metadata), and their type. */
export const PER_HOST_TLVS_KEY = 'envoy.transport_sockets.proxy_protocol';
const PER_HOST_CONFIG = 'envoy.config.core.v3.PerHostConfig';

/** One of an endpoint's TLVs as the supervisor sends it to workers: the value in base64. */
export interface HostTlv {
  type: number;
  value: string;
}

/**
 * An endpoint's added_tlvs (PerHostConfig in its metadata), which its PROXY headers carry before
 * the cluster's; undefined when it has none. `path`/`errors` given: what is wrong is reported
 * (Envoy only warns on each connection, and sends the cluster's TLVs).
 */
export function hostTlvsOf(metadata: unknown, path?: string, errors?: ConfigError[]): HostTlv[] | undefined {
  const typed = obj(obj(metadata).typed_filter_metadata)[PER_HOST_TLVS_KEY];
  if (typed === undefined) return undefined;
  const at = `${path}.metadata.typed_filter_metadata['${PER_HOST_TLVS_KEY}']`;
  const type = obj(typed)['@type'];
  if (typeof type !== 'string' || typeNameOfUrl(type) !== PER_HOST_CONFIG) {
    errors?.push(configError('invalid', at, `an endpoint's PROXY protocol TLVs are a ${PER_HOST_CONFIG}, not ${String(type)}`));
    return undefined;
  }
  const out: HostTlv[] = [];
  list(obj(typed).added_tlvs).forEach((t, i) => {
    // As Envoy: an endpoint's TLVs are static values only.
    if (t.format_string !== undefined) errors?.push(configError('unsupported', `${at}.added_tlvs[${i}].format_string`, "an endpoint's TLVs take a value, not a format string (as Envoy's)"));
    else if (t.value === undefined || t.value === '') errors?.push(configError('invalid', `${at}.added_tlvs[${i}].value`, 'a TLV needs a value'));
    else out.push({ type: Number(t.type ?? 0) & 0xff, value: String(t.value) });
  });
  return out.length ? out : undefined;
}

/** TLVs in order, the first of each type kept (Envoy skips a type it has already). */
function firstOfEachType(tlvs: Tlv[], taken = new Set<number>()): Tlv[] {
  return tlvs.filter((t) => !taken.has(t.type) && (taken.add(t.type), true));
}

export interface ProxyHeaderSource {
  /** The downstream's origin: its client and the address it connected to, and its TLVs. */
  origin: Pick<ConnectionOrigin, 'remote' | 'local' | 'tlvs'> | undefined;
}

interface HeaderStats {
  tlvsTooLong: Counter;
}

/** One cluster's (or transport_socket_matches entry's) PROXY header settings. */
export class UpstreamProxyHeader {
  readonly version: 'v1' | 'v2';
  private readonly passThrough: Set<number> | 'all';
  private readonly added: Tlv[];
  private readonly stats: HeaderStats;

  constructor(config: JsonObject, clusterName: string) {
    const c = obj(config.config);
    this.version = c.version === 'V2' || c.version === 1 ? 'v2' : 'v1';
    this.passThrough = passThroughOf(c.pass_through_tlvs);
    this.added = firstOfEachType(list(c.added_tlvs).map((t) => ({ type: Number(t.type ?? 0) & 0xff, value: Buffer.from(String(t.value ?? ''), 'base64') })));
    this.stats = { tlvsTooLong: stats.counter(`cluster.${clusterName}.upstream.proxyprotocol.v2_tlvs_exceed_max_length`) };
  }

  /**
   * The header for a connection on behalf of `origin`'s downstream; without one, `own` gives the
   * connection's own addresses (known once it connects) for version 1. `hostTlvs`: the endpoint's
   * own (hostTlvsOf), which win over added_tlvs, as both win over what passes through.
   */
  header(origin: ProxyHeaderSource['origin'], own: () => { local: Endpoint; remote: Endpoint }, hostTlvs?: readonly HostTlv[]): Buffer {
    if (this.version === 'v1') {
      if (origin) return proxyV1Header(origin.remote, origin.local);
      const o = own();
      return proxyV1Header(o.local, o.remote);
    }
    if (!origin) return proxyV2LocalHeader();
    const added = hostTlvs ? firstOfEachType([...hostTlvs.map((t) => ({ type: t.type, value: Buffer.from(t.value, 'base64') })), ...this.added]) : this.added;
    const addedTypes = new Set(added.map((t) => t.type));
    const passed = origin.tlvs.filter((t) => !addedTypes.has(t.type) && (this.passThrough === 'all' || this.passThrough.has(t.type)));
    const tlvs = [...passed, ...added];
    const header = proxyV2Header(origin.remote, origin.local, tlvs);
    if (header) return header;
    // As Envoy: TLVs that would not fit are left out, and counted.
    this.stats.tlvsTooLong.inc();
    return proxyV2Header(origin.remote, origin.local, [])!;
  }

  /** What tells apart connections made for different downstreams (Envoy's hashKey of these options). */
  static originKey(origin: ProxyHeaderSource['origin']): string {
    if (!origin) return '';
    return `${origin.remote.ip}|${origin.remote.port}|${origin.local.ip}|${origin.local.port}|${origin.tlvs.map((t) => `${t.type}:${t.value.toString('hex')}`).join(',')}`;
  }
}

/** A transport socket's PROXY header settings, if it is the PROXY wrapper. */
export function proxyHeaderOf(transportSocket: unknown, clusterName: string): UpstreamProxyHeader | undefined {
  const w = proxyProtocolWrapper(transportSocket);
  return w ? new UpstreamProxyHeader(w.config, clusterName) : undefined;
}
