import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Dispatcher } from 'undici';
import { buildConnector, Client, Pool } from './undici-parts.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { ConnectionObserver } from './h2.js';
import type { UpstreamTls } from '../../shared/tls/upstream.js';
import type { UpstreamConnectionLimits } from '../../shared/upstream/protocol.js';

/** setTimeout's longest delay (about 24.8 days): "never" for a timeout that is off. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One client's current connection: the requests given to it, and the client (for whether it is busy). */
interface ConnectionLife {
  requests: number;
  client: Client | undefined;
}

/**
 * One worker's HTTP/1.1 connections to one host at one priority: undici's keep-alive pool behind
 * the cluster's `max_connections`, which counts every connection of the tree (shared memory, see
 * circuit-breaker.ts) from the moment it is attempted until it closes.
 *
 * As Envoy's connection pool does: a request takes a free connection; without one, it opens a
 * new connection while the cluster is under its limit; at the limit it counts
 * `upstream_cx_overflow` and waits (still pending) until one of this pool's connections is free
 * or closes. A pool with no connection at all opens one anyway, or its requests could wait for
 * ever on connections that other hosts and workers hold.
 */

interface Waiting {
  options: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
}

export interface Http1Target {
  /** `ip:port`. */
  address: string;
  connectTimeoutMs: number;
  /** The cluster's TLS; cleartext without it. */
  tls?: UpstreamTls;
  /** The cluster's common_http_protocol_options: idle timeout, requests and lifetime per connection. */
  limits: UpstreamConnectionLimits;
}

export class Http1Pool {
  private pool: Pool | undefined;
  /** This pool's connections, connecting or open. */
  private connections = 0;
  private readonly waiting: Waiting[] = [];
  private wakeScheduled = false;
  private closed = false;

  constructor(
    private readonly target: Http1Target,
    private readonly breaker: CircuitBreaker,
    private readonly observer: ConnectionObserver,
  ) {}

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.waiting.length === 0 && this.mayDispatch()) {
      this.undici().dispatch(options, handler);
      return;
    }
    if (this.waiting.length > 0 && !this.breaker.hasRoom('cx')) this.breaker.overflow.cx.inc();
    this.waiting.push({ options, handler });
  }

  /** Whether a request sent now finds a connection (or may open one); counts the overflow when not. */
  private mayDispatch(): boolean {
    if (this.canProceed()) return true;
    this.breaker.overflow.cx.inc();
    return this.connections === 0;
  }

  private canProceed(): boolean {
    return this.breaker.hasRoom('cx') || (this.pool !== undefined && this.pool.stats.free > 0);
  }

  /** Takes a request out of the wait (its route timeout fired, or its client left); false if it was not waiting. */
  cancel(handler: Dispatcher.DispatchHandler): boolean {
    const i = this.waiting.findIndex((w) => w.handler === handler);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    return true;
  }

  /**
   * One of this pool's connections is free again (its client's `drain`) or closed: waiting
   * requests go out. After a microtask, once the pool itself has seen the drain (its listener
   * runs after ours); a dispatch before that would find the connection busy and open another.
   */
  private released(): void {
    if (this.waiting.length === 0 || this.wakeScheduled) return;
    this.wakeScheduled = true;
    queueMicrotask(() => {
      this.wakeScheduled = false;
      while (this.waiting.length > 0 && !this.closed && (this.canProceed() || this.connections === 0)) {
        const next = this.waiting.shift()!;
        this.undici().dispatch(next.options, next.handler);
      }
    });
  }

  private undici(): Pool {
    if (this.pool) return this.pool;
    const tls = this.target.tls;
    const connector = buildConnector({ timeout: this.target.connectTimeoutMs, ...tls?.options } as buildConnector.BuildOptions);
    const { idleMs } = this.target.limits;
    // idle_timeout 0 turns it off; undici wants a number, so the longest timer there is.
    const keepAliveMs = idleMs > 0 ? idleMs : MAX_TIMER_MS;
    const pool = new Pool(`${tls ? 'https' : 'http'}://${this.target.address}`, {
      factory: (origin, options) => this.client(origin, options, connector),
      // The cluster-wide count decides; a pool never needs more than the limit.
      connections: this.breaker.maxConnections,
      // The cluster's idle_timeout (a server's Keep-Alive hint can only shorten it).
      keepAliveTimeout: keepAliveMs,
      keepAliveMaxTimeout: keepAliveMs,
      // Timeouts are the router's (route timeout, per-try timeout); undici's own defaults would cut long responses.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.pool = pool;
    return pool;
  }

  /**
   * One of the pool's clients: one connection at a time, re-made when it closes. It counts the
   * requests given to its current connection (max_requests_per_connection, upstream_rq_per_cx)
   * and says when undici closed it for being idle.
   */
  private client(origin: URL, options: Pool.Options, connector: buildConnector.connector): Client {
    const life: ConnectionLife = { requests: 0, client: undefined };
    const client = new Client(origin, { ...options, connect: (opts, callback) => this.connect(opts, callback, connector, life) } as Client.Options);
    life.client = client;
    const dispatch = client.dispatch.bind(client);
    const maxRequests = this.target.limits.maxRequests;
    client.dispatch = (opts, handler) => {
      if (++life.requests !== maxRequests) return dispatch(opts, handler);
      // The connection's last request (counted now, as Envoy counts it): undici closes the
      // connection after its response, and tells the upstream so with `connection: close`.
      this.observer.limitReached?.('max_requests');
      return dispatch({ ...opts, reset: true }, handler);
    };
    client.on('drain', () => this.released());
    client.on('disconnect', (_origin, _targets, err) => {
      if (err?.message === 'socket idle timeout') this.observer.limitReached?.('idle_timeout');
    });
    return client;
  }

  /** A connection for one of the clients, counted against max_connections from the attempt until it closes. */
  private connect(options: buildConnector.Options, callback: buildConnector.Callback, connector: buildConnector.connector, life: ConnectionLife): void {
    this.connections++;
    this.breaker.acquire('cx');
    const started = performance.now();
    const tls = this.target.tls;
    connector(options, (err, socket) => {
      tls?.outcome(err, err ? undefined : (socket as TLSSocket));
      if (err || !socket) {
        this.observer.connectionFailed((err as NodeJS.ErrnoException | null)?.code === 'UND_ERR_CONNECT_TIMEOUT');
        this.lost();
        callback(err ?? new Error('no socket'), null);
        return;
      }
      const openedAt = performance.now();
      this.observer.connectionOpened({ connectMs: openedAt - started, protocol: 'http1', socket });
      const maxMs = this.target.limits.maxConnectionMs;
      const expiry = maxMs > 0 ? setTimeout(() => this.expire(socket, life), maxMs).unref() : undefined;
      let remote = false;
      socket.once('end', () => (remote = true));
      socket.once('close', () => {
        clearTimeout(expiry);
        // The requests this connection took; those given to the client from now on are the next connection's.
        const requests = life.requests;
        life.requests = 0;
        this.observer.connectionClosed({ lengthMs: performance.now() - openedAt, rxBytes: socket.bytesRead, txBytes: socket.bytesWritten, remote, socket, requests });
        this.lost();
      });
      callback(null, socket);
    });
  }

  /**
   * max_connection_duration: an idle connection closes now; a busy one takes no further request
   * and closes after the response it carries (undici's own "reset after this response" mark, the
   * one a request dispatched with `reset` sets), as Envoy drains it.
   */
  private expire(socket: Socket, life: ConnectionLife): void {
    if (socket.destroyed) return;
    this.observer.limitReached?.('max_connection_duration');
    if (!life.client || life.client.stats.running === 0) {
      socket.destroy();
      return;
    }
    const reset = Object.getOwnPropertySymbols(socket).find((sym) => sym.description === 'reset');
    if (reset) (socket as unknown as Record<symbol, boolean>)[reset] = true;
    else life.client.once('drain', () => socket.destroy()); // an undici without the mark: closed once its response is done
  }

  private lost(): void {
    this.connections--;
    this.breaker.release('cx');
    this.released();
  }

  /** The host left the cluster: waiting requests fail as reset, the rest finish on their connections. */
  close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      w.handler.onResponseError?.(undefined as never, Object.assign(new Error('host removed from the cluster'), { code: 'ECONNRESET' }));
    }
    return this.pool ? this.pool.close() : Promise.resolve();
  }
}

