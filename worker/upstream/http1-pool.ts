import type { Socket } from 'node:net';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { ConnectionObserver } from './h2.js';
import { Http1Connection, type Http1ConnectionEvents } from './http1-connection.js';
import type { UpstreamHandler, UpstreamRequest } from './upstream-handler.js';
import { logNewConnection, logReuse, poolLogOn } from './pool-log.js';
import type { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import type { UpstreamConnectionLimits } from '../../shared/extensions/upstreams/http/protocol.js';

/**
 * One worker's HTTP/1.1 connections to one host at one priority (http1-connection.ts), behind
 * the cluster's `max_connections`, which counts every connection of the tree (shared memory, see
 * circuit-breaker.ts) from the moment it is attempted until it closes.
 *
 * As Envoy's connection pool does: a request takes a free connection; without one, it opens a
 * new connection while the cluster is under its limit; at the limit it counts
 * `upstream_cx_overflow` and waits (still pending) until one of this pool's connections is free
 * or closes. A pool with no connection at all opens one anyway, or its requests could wait for
 * ever on connections that other hosts and workers hold. The most recently freed connection is
 * used first, so that connections the load no longer needs reach their idle timeout.
 */

interface Waiting {
  request: UpstreamRequest;
  handler: UpstreamHandler;
}

export interface Http1Target {
  ip: string;
  port: number;
  /** `ip:port`. */
  address: string;
  connectTimeoutMs: number;
  /** The cluster's TLS; cleartext without it. */
  tls?: UpstreamTls;
  /** The cluster's common_http_protocol_options: idle timeout, requests and lifetime per connection. */
  limits: UpstreamConnectionLimits;
  /**
   * auto_config: connections offer h2 and http/1.1 by ALPN; the first that gets h2 goes to the
   * host's HTTP/2 sessions (this returns them), and so does every request this pool gets after.
   */
  /** How its connections' sockets are made when not as any other's (a PROXY header first). */
  connect?: () => Socket;
  auto?: { toH2(socket: Socket, connectMs: number): { request(method: string, scheme: string, path: string, headers: string[], body: UpstreamRequest['body'], handler: UpstreamHandler): void } };
}

export class Http1Pool {
  /** This pool's connections, connecting or open. */
  private readonly connections = new Set<Http1Connection>();
  /** Open connections with no request, the most recently freed last. */
  private readonly idle: Http1Connection[] = [];
  private readonly waiting: Waiting[] = [];
  private closed = false;
  private allClosed: (() => void) | undefined;
  private readonly events: Http1ConnectionEvents = {
    idle: (connection) => this.freed(connection),
    closed: (connection) => this.lost(connection),
    switchedToH2: (connection, socket, connectMs, first) => this.switched(connection, socket, connectMs, first),
  };
  /** auto_config, once a connection's ALPN said h2: where this pool's requests go. */
  private h2: ReturnType<NonNullable<Http1Target['auto']>['toH2']> | undefined;

  constructor(
    private readonly target: Http1Target,
    private readonly breaker: CircuitBreaker,
    private readonly observer: ConnectionObserver,
  ) {}

  dispatch(request: UpstreamRequest, handler: UpstreamHandler): void {
    if (this.h2) {
      this.h2.request(request.method, 'https', request.path, request.headers, request.body, handler);
      return;
    }
    if (this.waiting.length === 0) {
      const free = this.idle.pop();
      if (free) {
        logReuse(free.socket);
        this.send(free, request, handler);
        return;
      }
      if (this.breaker.hasRoom('cx')) {
        this.open(request, handler);
        return;
      }
      this.breaker.overflow.cx.inc();
      if (this.connections.size === 0) {
        this.open(request, handler);
        return;
      }
    } else if (!this.breaker.hasRoom('cx')) this.breaker.overflow.cx.inc();
    this.waiting.push({ request, handler });
  }

  /** Takes a request out of the wait (its route timeout fired, or its client left); false if it was not waiting. */
  cancel(handler: UpstreamHandler): boolean {
    const i = this.waiting.findIndex((w) => w.handler === handler);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    return true;
  }

  /** A connection of its own for a request, counted against max_connections from the attempt until it closes. */
  private open(request: UpstreamRequest, handler: UpstreamHandler): void {
    if (poolLogOn()) {
      const connecting = [...this.connections].filter((c) => !c.connected).length;
      logNewConnection(this.idle.length, this.connections.size - this.idle.length - connecting, connecting);
    }
    this.breaker.acquire('cx');
    const { idleMs, maxConnectionMs } = this.target.limits;
    const connection = new Http1Connection({ ...this.target, idleMs, maxConnectionMs, auto: this.target.auto !== undefined }, this.observer, this.events);
    this.connections.add(connection);
    this.send(connection, request, handler);
  }

  /**
   * The connection's last request under max_requests_per_connection (counted now, as Envoy
   * counts it) goes with `connection: close`, and the connection closes after its response.
   */
  private send(connection: Http1Connection, request: UpstreamRequest, handler: UpstreamHandler): void {
    const last = connection.requests + 1 === this.target.limits.maxRequests;
    if (last) this.observer.limitReached?.('max_requests');
    connection.send(request, handler, last);
  }

  /** A connection is free: the longest waiting request takes it, else it waits for the next. */
  private freed(connection: Http1Connection): void {
    if (this.closed) {
      connection.retire();
      return;
    }
    const next = this.waiting.shift();
    if (next) this.send(connection, next.request, next.handler);
    else this.idle.push(connection);
  }

  /**
   * auto_config: a connection's ALPN said h2. It leaves this pool (its max_connections unit with
   * it: the HTTP/2 session holds one now), and its request and every waiting one go over HTTP/2.
   */
  private switched(connection: Http1Connection, socket: Socket, connectMs: number, first: Waiting | undefined): void {
    this.connections.delete(connection);
    this.breaker.release('cx');
    // Each such connection becomes one of the host's sessions (two may have been connecting at once).
    const h2 = (this.h2 = this.target.auto!.toH2(socket, connectMs));
    for (const w of [...(first ? [first] : []), ...this.waiting.splice(0)]) h2.request(w.request.method, 'https', w.request.path, w.request.headers, w.request.body, w.handler);
    if (this.connections.size === 0) this.allClosed?.();
  }

  private lost(connection: Http1Connection): void {
    this.connections.delete(connection);
    const i = this.idle.indexOf(connection);
    if (i >= 0) this.idle.splice(i, 1);
    this.breaker.release('cx');
    // Its unit is free again: a waiting request may open a connection of its own.
    while (this.waiting.length > 0 && !this.closed && (this.breaker.hasRoom('cx') || this.connections.size === 0)) {
      const next = this.waiting.shift()!;
      this.open(next.request, next.handler);
    }
    if (this.connections.size === 0) this.allClosed?.();
  }

  /** The host left the cluster: waiting requests fail as reset, the rest finish on their connections, which then close. */
  close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      w.handler.onResponseError?.(undefined as never, Object.assign(new Error('host removed from the cluster'), { code: 'ECONNRESET' }));
    }
    if (this.connections.size === 0) return Promise.resolve();
    const done = new Promise<void>((resolve) => (this.allClosed = resolve));
    for (const connection of [...this.connections]) connection.retire();
    return done;
  }
}
