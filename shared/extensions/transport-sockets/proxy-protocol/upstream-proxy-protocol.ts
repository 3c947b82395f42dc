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
    this.added = list(c.added_tlvs).map((t) => ({ type: Number(t.type ?? 0) & 0xff, value: Buffer.from(String(t.value ?? ''), 'base64') }));
    this.stats = { tlvsTooLong: stats.counter(`cluster.${clusterName}.upstream.proxyprotocol.v2_tlvs_exceed_max_length`) };
  }

  /**
   * The header for a connection on behalf of `origin`'s downstream; without one, `own` gives the
   * connection's own addresses (known once it connects) for version 1.
   */
  header(origin: ProxyHeaderSource['origin'], own: () => { local: Endpoint; remote: Endpoint }): Buffer {
    if (this.version === 'v1') {
      if (origin) return proxyV1Header(origin.remote, origin.local);
      const o = own();
      return proxyV1Header(o.local, o.remote);
    }
    if (!origin) return proxyV2LocalHeader();
    const addedTypes = new Set(this.added.map((t) => t.type));
    const passed = origin.tlvs.filter((t) => !addedTypes.has(t.type) && (this.passThrough === 'all' || this.passThrough.has(t.type)));
    const tlvs = [...passed, ...this.added];
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
