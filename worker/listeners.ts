import { createServer, type Server, type Socket } from 'node:net';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { durationMs, typeNameOfUrl } from '../shared/config/wkt.js';
import { extensionByName, extensionByTypeName } from '../shared/config/extensions.js';
import { chainMatchOf, needsInspection, selectChain, type ChainMatch, type ConnectionFacts } from '../shared/chain-match.js';
import type { ListenerInfo } from '../shared/ipc.js';
import { stats } from '../shared/stats/process.js';
import { ListenerStats, listenerStatPrefix } from '../shared/stats/scopes.js';
import type { Counter } from '../shared/stats/store.js';
import { listenerChainKey, type LoadedTls } from '../shared/tls/context.js';
import { HttpConnectionManager, type ConnectionManagerContext } from './http/connection-manager.js';
import { TcpProxy } from './tcp/tcp-proxy.js';
import { parseClientHello, type ClientHello } from './tls/client-hello.js';
import { DownstreamTls } from './tls/downstream.js';

/**
 * The listeners one worker serves. Each accepts on the descriptor the supervisor handed down,
 * picks a filter chain per connection (Envoy's filter_chain_match: destination port, and from
 * the TLS ClientHello when a chain asks for it, server name, TLS or not, ALPN), terminates TLS
 * when the chain has a DownstreamTlsContext, and hands the connection to the chain's terminal
 * network filter: an HTTP connection manager or a TCP proxy.
 */

type Obj = JsonObject;
type TerminalFilter = HttpConnectionManager | TcpProxy;

interface Chain {
  match: ChainMatch;
  tls: DownstreamTls | undefined;
  filter: TerminalFilter;
}

/** Envoy's listener_filters_timeout default: how long the ClientHello may take to arrive. */
const INSPECT_TIMEOUT_MS = 15_000;

function terminalFilter(chain: Obj): { name: string; config: Obj } {
  const filters = list(chain.filters);
  const f = filters[filters.length - 1]!;
  const config = obj(f.typed_config);
  const ext = typeof config['@type'] === 'string' ? extensionByTypeName(typeNameOfUrl(config['@type'])) : extensionByName(String(f.name));
  return { name: ext?.name ?? String(f.name), config };
}

export class ServedListener {
  private readonly chains: Chain[];
  private readonly defaultChain: Chain | undefined;
  private readonly inspect: boolean;
  private readonly inspectTimeoutMs: number;
  private readonly stats: ListenerStats;
  private readonly noChainMatch: Counter;
  private readonly inspectTimeout: Counter;
  private server: Server | undefined;

  constructor(
    readonly info: ListenerInfo,
    config: Obj,
    tls: LoadedTls,
    ctx: Omit<ConnectionManagerContext, 'trafficDirection'>,
  ) {
    const prefix = listenerStatPrefix(info.address, config.stat_prefix as string | undefined);
    const build = (chain: Obj, key: number | 'default'): Chain => {
      const { name, config: filterConfig } = terminalFilter(chain);
      const context = tls.listeners[listenerChainKey(info.name, key)];
      const filter: TerminalFilter =
        name === 'envoy.filters.network.tcp_proxy' ? new TcpProxy(filterConfig, ctx.clusters) : new HttpConnectionManager(filterConfig, { ...ctx, trafficDirection: info.trafficDirection });
      return {
        match: chainMatchOf(chain),
        tls: context ? new DownstreamTls(context, prefix, (socket) => filter.accept(socket, socket.alpnProtocol)) : undefined,
        filter,
      };
    };
    this.chains = list(config.filter_chains).map((c, i) => build(c, i));
    this.defaultChain = config.default_filter_chain ? build(obj(config.default_filter_chain), 'default') : undefined;
    this.inspect = this.chains.some((c) => needsInspection(c.match));
    this.inspectTimeoutMs = typeof config.listener_filters_timeout === 'string' ? durationMs(config.listener_filters_timeout) : INSPECT_TIMEOUT_MS;
    this.stats = new ListenerStats(prefix);
    this.noChainMatch = stats.counter(`${prefix}no_filter_chain_match`);
    this.inspectTimeout = stats.counter(`${prefix}downstream_pre_cx_timeout`);
  }

  /** Serves the inherited listening descriptor; resolves once listening. */
  listen(): Promise<void> {
    const server = createServer({ pauseOnConnect: true }, (socket) => this.onConnection(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ fd: this.info.childFd }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  private onConnection(raw: Socket): void {
    this.stats.opened();
    raw.once('close', () => this.stats.closed());
    raw.on('error', () => raw.destroy());
    if (!this.inspect) {
      this.dispatch(raw, { destinationPort: raw.localPort ?? 0, serverName: undefined, transportProtocol: 'raw_buffer', applicationProtocols: [] });
      return;
    }
    this.readClientHello(raw, (hello) =>
      this.dispatch(raw, { destinationPort: raw.localPort ?? 0, serverName: hello.serverName, transportProtocol: hello.tls ? 'tls' : 'raw_buffer', applicationProtocols: hello.alpn }),
    );
  }

  /** Envoy's tls_inspector: reads until the ClientHello is whole (or the bytes say plaintext), then puts them back. */
  private readClientHello(raw: Socket, done: (hello: ClientHello) => void): void {
    let data: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      this.inspectTimeout.inc();
      raw.destroy();
    }, this.inspectTimeoutMs);
    const onData = (chunk: Buffer) => {
      data = data.length === 0 ? chunk : Buffer.concat([data, chunk]);
      const parsed = parseClientHello(data);
      if (!parsed.done) return;
      raw.off('data', onData);
      raw.off('end', onEnd);
      clearTimeout(timer);
      raw.pause();
      raw.unshift(data);
      done(parsed.hello);
    };
    const onEnd = () => {
      clearTimeout(timer);
      raw.destroy();
    };
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.resume();
  }

  private dispatch(raw: Socket, facts: ConnectionFacts): void {
    const chain = selectChain(this.chains, facts) ?? this.defaultChain;
    if (!chain) {
      this.noChainMatch.inc();
      raw.destroy();
      return;
    }
    if (chain.tls) chain.tls.accept(raw);
    else chain.filter.accept(raw);
  }

  /** /drain_listeners: stop accepting; connections already open go on. */
  stopAccepting(): void {
    this.server?.close();
  }

  /** Stops accepting and resolves once every connection has closed (HTTP ones are wound down first). */
  close(): Promise<void> {
    const server = this.server;
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    const chains = this.defaultChain ? [...this.chains, this.defaultChain] : this.chains;
    return Promise.all([closed, ...chains.map((c) => c.filter.close())]).then(() => undefined);
  }
}

export async function serveListeners(bootstrap: Obj, infos: ListenerInfo[], tls: LoadedTls, ctx: Omit<ConnectionManagerContext, 'trafficDirection'>): Promise<ServedListener[]> {
  const configs = list(obj(bootstrap.static_resources).listeners);
  const served: ServedListener[] = [];
  for (const info of infos) {
    const listener = new ServedListener(info, configs[info.configIndex]!, tls, ctx);
    await listener.listen();
    served.push(listener);
  }
  return served;
}
