import type { Socket } from 'node:net';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { Listener } from '../shared/config/envoy-types.js';
import { durationMs, typeNameOfUrl } from '../shared/config/wkt.js';
import { extensionByName, extensionByTypeName } from '../shared/extensions/registry.js';
import { chainMatchOf, needsInspection, selectChain, usesAddresses, type ChainMatch, type ConnectionFacts } from '../shared/chain-match.js';
import { connectionEntry, noteInspectedServerName, ResponseFlag } from '../shared/access-log/entry.js';
import { AccessLogs } from '../shared/access-log/loggers.js';
import type { ListenerResource } from '../shared/config/resources.js';
import { bindBucketSlots } from '../shared/ratelimit/bucket-slots.js';
import type { DrainOrder } from '../shared/ipc.js';
import { stats } from '../shared/stats/process.js';
import { bufferLimitOf } from '../shared/config/buffer-limit.js';
import { ListenerStats, listenerStatPrefix } from '../shared/stats/scopes.js';
import { runtimeValue } from '../shared/runtime.js';
import { getLogger } from '../shared/log/logger.js';
import { newConnectionId } from '../shared/log/log-tags.js';
import { connectionAccepted } from './connection-log.js';
import { overload } from './overload.js';
import { GLOBAL_CONNECTIONS_MONITOR } from '../shared/overload/config.js';
import { listenerCountKey, type BreakerCounts } from '../shared/upstream/breaker-counts.js';
import type { Counter } from '../shared/stats/store.js';
import { HttpConnectionManager } from './http/connection-manager.js';
import type { ConnectionManagerContext } from './http/connection-manager-config.js';
import type { DrainManager } from './drain.js';
import { TcpProxy } from './tcp/tcp-proxy.js';
import { UdpProxy } from './udp/udp-proxy.js';
import { isUdpListener } from '../shared/config/semantic/listeners.js';
import type { RemoteInfo, Socket as DgramSocket } from 'node:dgram';
import { DownstreamTls } from './tls/downstream.js';
import { canonicalText } from '../shared/config/resource-hash.js';
import type { ConnectionFindings, ListenerFilter } from '../shared/network/listener-filter.js';
import { directRemoteOf, localOf, remoteOf, setConnectionOrigin } from '../shared/network/connection-origin.js';
import { isListenerFilter } from '../shared/extensions/descriptor.js';

/**
 * One listener as a worker serves it: for each connection its listening socket hands over, picks
 * a filter chain (Envoy's filter_chain_match: destination port, and from the TLS ClientHello when
 * a chain asks for it, server name, TLS or not, ALPN), terminates TLS when the chain has a
 * DownstreamTlsContext, and hands the connection to the chain's terminal network filter: an HTTP
 * connection manager or a TCP proxy. A changed listener's unchanged chains carry over to its next
 * version with their connections; the others drain for the drain time, then what is left closes.
 */

type Obj = JsonObject;
type TerminalFilter = HttpConnectionManager | TcpProxy;

interface Chain {
  /** Its configuration, as JSON text: a chain equal in the next version carries over. */
  json: string;
  match: ChainMatch;
  tls: DownstreamTls | undefined;
  filter: TerminalFilter;
  /** Drains with the tree, and alone when its listener changes or goes. */
  drain: DrainManager;
  /** Its open connections (closed at the end of its drain). */
  connections: Set<Socket>;
  /** While it drains: called when its last connection closes. */
  onEmpty?: () => void;
}

/** Envoy's listener_filters_timeout default: how long the ClientHello may take to arrive. */
const INSPECT_TIMEOUT_MS = 15_000;
const GLOBAL_LIMIT_KEY = 'overload.global_downstream_max_connections';
let warnedBothLimits = false;
/** As Envoy: both set, the overload manager's monitor is the limit (said once). */
function warnBothLimitsOnce(): void {
  if (warnedBothLimits) return;
  warnedBothLimits = true;
  getLogger('main', import.meta.url).warn(`Global downstream connections limits is configured via deprecated runtime key ${GLOBAL_LIMIT_KEY} and in ${GLOBAL_CONNECTIONS_MONITOR}. Using overload manager config.`);
}
const TLS_INSPECTOR = 'envoy.filters.listener.tls_inspector';
const PLAINTEXT: ConnectionFindings = { serverName: undefined, transportProtocol: 'raw_buffer', applicationProtocols: [] };

function terminalFilter(chain: Obj): { name: string; config: Obj } {
  const filters = list(chain.filters);
  const f = filters[filters.length - 1]!;
  const config = obj(f.typed_config);
  const ext = typeof config['@type'] === 'string' ? extensionByTypeName(typeNameOfUrl(config['@type'])) : extensionByName(String(f.name));
  return { name: ext?.name ?? String(f.name), config };
}

/** What a listener needs of its worker: the connection managers' context, and the worker's index (per-worker stats). */
export type ListenerContext = Omit<ConnectionManagerContext, 'trafficDirection'> & {
  workerIndex?: number;
  /** Every listener's open connections in the tree; `all` false: of those the global limit counts (not ignore_global_conn_limit). */
  totalConnections: (all: boolean) => number;
};

/**
 * The listener filters that read a connection's first bytes, in their order: those configured,
 * and the TLS inspector last where a chain matches on what only it can read (server names,
 * transport protocol, ALPN) and none is configured (Envoy injects it so). Empty: none.
 */
function listenerFiltersOf(config: Listener, chains: readonly Chain[]): (() => ListenerFilter)[] {
  const filters: (() => ListenerFilter)[] = [];
  let inspecting = false;
  for (const f of list(config.listener_filters)) {
    const typed = obj(f.typed_config);
    const ext = typeof typed['@type'] === 'string' ? extensionByTypeName(typeNameOfUrl(typed['@type'])) : extensionByName(String(f.name));
    if (!ext || !isListenerFilter(ext)) continue;
    filters.push(ext.create(typed));
    inspecting ||= ext.name === TLS_INSPECTOR;
  }
  if (inspecting || !chains.some((c) => needsInspection(c.match))) return filters;
  const inspector = extensionByName(TLS_INSPECTOR);
  if (inspector && isListenerFilter(inspector)) filters.push(inspector.create({}));
  return filters;
}

export class ServedListener {
  private readonly chains: Chain[];
  private readonly defaultChain: Chain | undefined;
  /** The listener filters each connection's first bytes go through, in order. */
  private readonly listenerFilters: (() => ListenerFilter)[];
  /** Whether a chain matches on the connection's addresses (then they are read for each connection). */
  private readonly matchesAddresses: boolean;
  private readonly inspectTimeoutMs: number;
  private readonly stats: ListenerStats;
  private readonly noChainMatch: Counter;
  /** The listener's own access_log: connections it closes before any filter chain has them. */
  private readonly accessLogs: AccessLogs | undefined;
  private readonly inspectTimeout: Counter;
  /** A UDP listener's proxy (its udp_proxy listener filter); a UDP listener has no filter chains. */
  readonly udp: UdpProxy | undefined;
  /** Its open connections, counted for the whole tree (every version of the listener alike), and the runtime key that may limit them. */
  private readonly openConnections: { counts: BreakerCounts; base: number; worker: number };
  private readonly limitKey: string;
  private readonly cxOverflow: Counter;
  private globalCxOverflow: Counter | undefined;
  private overloadReject: Counter | undefined;
  private readonly statPrefix: string;
  private readonly totalConnections: (all: boolean) => number;
  /** bypass_overload_manager: no overload action touches its connections (nor does the monitor's global limit). */
  readonly bypassesOverload: boolean;
  /** Its connections are not counted by the overload manager's global limit (ignore_global_conn_limit, or bypass_overload_manager). */
  readonly ignoresGlobalLimit: boolean;

  /** `previous`: the version this one replaces in place; its chains that are unchanged carry over. */
  constructor(
    readonly resource: ListenerResource,
    ctx: ListenerContext,
    previous?: ServedListener,
  ) {
    const config = resource.config;
    const prefix = listenerStatPrefix(resource.address, config.stat_prefix as string | undefined);
    const reusable = new Map((previous?.allChains() ?? []).map((c) => [c.json, c]));
    const build = (chain: Obj, key: string): Chain => {
      const json = canonicalText(chain);
      const kept = reusable.get(json);
      if (kept) {
        reusable.delete(json);
        return kept;
      }
      // Its local rate limits count in the buckets the supervisor gave this chain (a chain kept above keeps its own).
      bindBucketSlots(chain, resource.bucketSlots[key]);
      const { name, config: filterConfig } = terminalFilter(chain);
      const context = resource.tls[key];
      const drain = ctx.drain.child();
      const filter: TerminalFilter =
        name === 'envoy.filters.network.tcp_proxy' ? new TcpProxy(filterConfig, ctx.clusters, bufferLimitOf(config)) : new HttpConnectionManager(filterConfig, { ...ctx, drain, trafficDirection: resource.trafficDirection, bufferLimit: bufferLimitOf(config), listenerStatPrefix: prefix, bypassOverload: config.bypass_overload_manager === true });
      return {
        json,
        match: chainMatchOf(chain),
        tls: context ? new DownstreamTls(context, prefix, (socket) => filter.accept(socket, socket.alpnProtocol)) : undefined,
        filter,
        drain,
        connections: new Set(),
      };
    };
    this.chains = list(config.filter_chains).map((c, i) => build(c, String(i)));
    this.defaultChain = config.default_filter_chain ? build(obj(config.default_filter_chain), 'default') : undefined;
    // The TLS inspector runs where it is configured (its figures and %REQUESTED_SERVER_NAME% are then
    // there, as in Envoy) or where a chain matches on what it reads; its tls_inspector.* exist from the start.
    this.listenerFilters = listenerFiltersOf(config, this.chains);
    this.matchesAddresses = this.chains.some((c) => usesAddresses(c.match));
    this.inspectTimeoutMs = typeof config.listener_filters_timeout === 'string' ? durationMs(config.listener_filters_timeout) : INSPECT_TIMEOUT_MS;
    this.stats = new ListenerStats(prefix, ctx.workerIndex);
    const { counts, worker } = ctx.clusters.breakers;
    const key = listenerCountKey(resource.name);
    counts.assign(key, resource.connectionSlot);
    this.openConnections = { counts, worker, base: counts.base(key, 0, 'cx') };
    this.limitKey = `envoy.resource_limits.listener.${resource.name}.connection_limit`;
    this.cxOverflow = stats.counter(`${prefix}downstream_cx_overflow`);
    this.statPrefix = prefix;
    this.totalConnections = ctx.totalConnections;
    this.bypassesOverload = config.bypass_overload_manager === true;
    this.ignoresGlobalLimit = config.ignore_global_conn_limit === true || this.bypassesOverload;
    this.noChainMatch = stats.counter(`${prefix}no_filter_chain_match`);
    this.accessLogs = AccessLogs.from(config.access_log);
    this.inspectTimeout = stats.counter(`${prefix}downstream_pre_cx_timeout`);
    this.udp = isUdpListener(config) ? new UdpProxy(obj(list(config.listener_filters)[0]?.typed_config), ctx.clusters) : undefined;
  }

  /**
   * Its chains' TLS contexts, built again by the supervisor (their SDS secrets came or changed):
   * handshakes from now on use them; connections already open keep theirs.
   */
  updateTls(tls: ListenerResource['tls']): void {
    const keyed: [string, Chain][] = this.chains.map((c, i) => [String(i), c]);
    if (this.defaultChain) keyed.push(['default', this.defaultChain]);
    for (const [key, chain] of keyed) {
      const context = tls[key];
      if (context && chain.tls) chain.tls = new DownstreamTls(context, this.statPrefix, (socket) => chain.filter.accept(socket, socket.alpnProtocol));
    }
    this.resource.tls = tls;
  }

  /** A datagram on one of a UDP listener's sockets. */
  onDatagram(socket: DgramSocket, data: Buffer, peer: RemoteInfo): void {
    this.udp?.onDatagram(socket, data, peer);
  }

  get name(): string {
    return this.resource.name;
  }

  /** Its open connections, in every worker. */
  openConnectionCount(): number {
    return this.openConnections.counts.total(this.openConnections.base);
  }

  private allChains(): Chain[] {
    return this.defaultChain ? [...this.chains, this.defaultChain] : this.chains;
  }

  /**
   * The global connection limit is reached (ignore_global_conn_limit: never for this listener). A
   * listener bypassing the overload manager is not limited by its monitor, only by the runtime key.
   */
  private overGlobalLimit(): boolean {
    if (this.resource.config.ignore_global_conn_limit === true) return false;
    const monitor = this.bypassesOverload ? undefined : overload.maxGlobalConnections;
    if (monitor !== undefined) {
      if (runtimeValue(GLOBAL_LIMIT_KEY) !== undefined) warnBothLimitsOnce();
      return this.totalConnections(false) >= monitor;
    }
    const limit = runtimeValue(GLOBAL_LIMIT_KEY);
    return limit !== undefined && /^\d+$/.test(limit) && this.totalConnections(true) >= Number(limit);
  }

  /**
   * A connection its listening socket accepted (paused), closed at once, as Envoy's listener does
   * in this order: past the global connection limit (the overload manager's
   * global_downstream_max_connections monitor, else the runtime's
   * `overload.global_downstream_max_connections`; every listener, every worker):
   * `downstream_global_cx_overflow`; among those reject_incoming_connections refuses:
   * `downstream_cx_overload_reject`; past the runtime's
   * `envoy.resource_limits.listener.<name>.connection_limit` (its open connections in every
   * worker): `downstream_cx_overflow`.
   */
  onConnection(raw: Socket): void {
    if (this.overGlobalLimit()) {
      (this.globalCxOverflow ??= stats.counter(`${this.statPrefix}downstream_global_cx_overflow`)).inc();
      raw.destroy();
      return;
    }
    const reject = this.bypassesOverload ? 0 : overload.rejectFraction;
    if (reject > 0 && (reject >= 1 || Math.random() < reject)) {
      (this.overloadReject ??= stats.counter(`${this.statPrefix}downstream_cx_overload_reject`)).inc();
      raw.destroy();
      return;
    }
    const { counts, base, worker } = this.openConnections;
    const limit = runtimeValue(this.limitKey);
    if (limit !== undefined && /^\d+$/.test(limit) && counts.total(base) >= Number(limit)) {
      this.cxOverflow.inc();
      raw.destroy();
      return;
    }
    counts.add(base, worker, 1);
    newConnectionId(raw);
    this.stats.opened();
    const started = performance.now();
    raw.once('close', () => {
      counts.add(base, worker, -1);
      this.stats.closed(performance.now() - started);
    });
    raw.on('error', () => raw.destroy());
    if (this.listenerFilters.length === 0) {
      this.dispatch(raw, { destinationPort: raw.localPort ?? 0, ...PLAINTEXT });
      return;
    }
    this.readFirstBytes(raw, this.listenerFilters.map((f) => f()), (found) => {
      noteInspectedServerName(raw, found.serverName);
      this.dispatch(raw, { destinationPort: localOf(raw).port, ...found });
    });
  }

  /**
   * The listener filters read, one after the other, until each knows (the ClientHello whole, a
   * PROXY header, or plaintext); what they did not consume is then put back.
   */
  private readFirstBytes(raw: Socket, filters: ListenerFilter[], done: (found: ConnectionFindings) => void): void {
    let data: Buffer = Buffer.alloc(0);
    let next = 0;
    let found = PLAINTEXT;
    const pre = this.stats.preCxActive;
    pre.inc();
    let inspecting = true;
    const inspected = () => {
      if (inspecting) pre.dec();
      inspecting = false;
    };
    raw.once('close', inspected);
    const timer = setTimeout(() => {
      this.inspectTimeout.inc();
      raw.destroy();
    }, this.inspectTimeoutMs);
    const finish = () => {
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onError);
      clearTimeout(timer);
      inspected();
      raw.pause();
      if (data.length > 0) raw.unshift(data);
      done(found);
    };
    const run = () => {
      while (next < filters.length) {
        const verdict = filters[next]!.onData(data, raw);
        if (!verdict) return;
        if (verdict.close) {
          clearTimeout(timer);
          inspected();
          raw.destroy();
          return;
        }
        if (verdict.consumed) data = data.subarray(verdict.consumed);
        if (verdict.origin) setConnectionOrigin(raw, verdict.origin);
        if (verdict.findings) found = verdict.findings;
        next++;
        // A filter after one that consumed bytes waits for bytes of its own.
        if (data.length === 0 && next < filters.length) return;
      }
      finish();
    };
    const onData = (chunk: Buffer) => {
      data = data.length === 0 ? chunk : Buffer.concat([data, chunk]);
      run();
    };
    const onEnd = () => {
      clearTimeout(timer);
      this.stats.listenerFilterRemoteClose.inc();
      raw.destroy();
    };
    const onError = () => {
      if (inspecting) this.stats.listenerFilterError.inc();
    };
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('error', onError);
    raw.resume();
  }

  private dispatch(raw: Socket, facts: ConnectionFacts): void {
    if (this.matchesAddresses) facts.addresses = { local: localOf(raw), remote: remoteOf(raw), directRemote: directRemoteOf(raw) };
    const chain = selectChain(this.chains, facts) ?? this.defaultChain;
    if (!chain) {
      this.noChainMatch.inc();
      if (this.accessLogs) {
        // As Envoy's: a connection no filter chain takes is logged with NR.
        const entry = connectionEntry(raw);
        entry.responseFlags = ResponseFlag.noRouteFound;
        this.accessLogs.log(entry);
      }
      raw.destroy();
      return;
    }
    chain.connections.add(raw);
    connectionAccepted(raw);
    raw.once('close', () => {
      chain.connections.delete(raw);
      if (chain.connections.size === 0) chain.onEmpty?.();
    });
    if (chain.tls) chain.tls.accept(raw);
    else chain.filter.accept(raw);
  }

  /**
   * Drains this version's chains that `next` (its in-place successor) did not carry over, or all
   * of them: their connections are told to go per `order` (Connection: close, GOAWAY, a shrinking
   * keep-alive), and whatever is left at the end of the drain time is closed. Resolves once the
   * last of them has closed.
   */
  drain(order: DrainOrder, next?: ServedListener): Promise<void> {
    if (this.udp) {
      // A UDP listener's sessions go on until the drain's end (a client's next datagram may already reach the next version).
      const udp = this.udp;
      return new Promise((resolve) =>
        setTimeout(() => {
          udp.close();
          resolve();
        }, Math.max(0, order.startedAt + order.drainTimeMs - Date.now())),
      );
    }
    const carried = new Set(next?.allChains() ?? []);
    const draining = this.allChains().filter((c) => !carried.has(c));
    for (const c of draining) c.drain.start(order);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(end);
        for (const c of draining) {
          c.onEmpty = undefined;
          for (const socket of c.connections) socket.destroy();
          void c.filter.close();
          c.drain.dispose();
        }
        resolve();
      };
      const end = setTimeout(finish, Math.max(0, order.startedAt + order.drainTimeMs - Date.now()));
      const check = () => {
        if (draining.every((c) => c.connections.size === 0)) finish();
      };
      for (const c of draining) c.onEmpty = check;
      check();
    });
  }

  /** Winds every connection down (HTTP ones first: idle ones close, busy ones finish); resolves once all have closed. */
  close(): Promise<void> {
    this.udp?.close();
    return Promise.all(this.allChains().map((c) => c.filter.close())).then(() => undefined);
  }
}
